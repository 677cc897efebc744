// Redaction's cost on a turn's sync: the same turns (the commit bench's conversation: 5 messages
// of 1–3 KB, two tool calls) synced by two mirrors in the same run, one with the default redaction
// (secretlint's recommended preset) and one with `redaction: false`, turn by turn interleaved
// (A, B, A, B…) so machine noise falls on both. The conversation holds no secret, so both must end
// at the same commit id: the bench checks it, and `git fsck --strict` on both.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { MemoryDag, type Mirror } from '../packages/core/src/index.js';
import { createNodeMirror } from '../packages/node-fs/src/index.js';
import { Conversation } from './lib/conversation.js';
import { align, failWith, fsckOr, git, ms, ratio, stats, writeResults } from './lib/measure.js';

const SID = 'bench-redaction';
const HISTORY_TURNS = 20; // 100 messages before the first timed turn
const WARMUP = 3;
const TIMED = 30;
const fail = failWith('redaction');

interface Contender {
  name: string;
  dag: MemoryDag;
  mirror: Mirror;
  root: string;
  samples: number[];
}

async function contender(name: string, redact: boolean): Promise<Contender> {
  const dag = new MemoryDag();
  await dag.createSession({ id: SID, title: 'redaction bench', created_at: 1779500000 });
  const root = mkdtempSync(join(tmpdir(), `eg-bench-redaction-${name}-`));
  const mirror = createNodeMirror({ dag, root, ...(redact ? {} : { redaction: false }) });
  return { name, dag, mirror, root, samples: [] };
}

export async function run(): Promise<void> {
  const keep = process.argv.includes('--keep');
  const contenders = [await contender('redacted', true), await contender('plain', false)];
  // One conversation, its turns given to both DAGs: the same nodes, byte for byte.
  const conversation = new Conversation(SID, 7);
  const addTurn = async () => {
    const turn = conversation.turn();
    for (const c of contenders) for (const n of turn) await c.dag.addNode(n);
  };
  for (let t = 0; t < HISTORY_TURNS; t++) await addTurn();
  for (const c of contenders) await c.mirror.sync(SID);
  for (let t = 0; t < WARMUP + TIMED; t++) {
    await addTurn();
    for (const c of contenders) {
      const t0 = performance.now();
      await c.mirror.sync(SID);
      if (t >= WARMUP) c.samples.push(performance.now() - t0);
    }
  }
  const tips = contenders.map((c) => git(c.mirror.repoPath(SID), 'rev-parse', 'main').trim());
  if (tips[0] !== tips[1]) fail(`a conversation without secrets gave two ids: ${tips.join(' and ')}`);
  for (const c of contenders) fsckOr(fail, c.mirror.repoPath(SID));
  const [redacted, plain] = contenders.map((c) => stats(c.samples));
  const rows = [
    ['contender', 'median ms/turn', 'p90 ms/turn'],
    ['sync, redaction on (default)', ms(redacted!.median), ms(redacted!.p90)],
    ['sync, redaction: false', ms(plain!.median), ms(plain!.p90)],
  ];
  console.log(`redaction: ${TIMED} turns of 5 messages after ${HISTORY_TURNS * 5}, interleaved`);
  console.log(align(rows));
  console.log(`redacted/plain (medians): ${ratio(redacted!.median / plain!.median)}; both end at ${tips[0]}`);
  writeResults('redaction', { turns: TIMED, history: HISTORY_TURNS * 5, redacted, plain, tip: tips[0] });
  if (!keep) for (const c of contenders) rmSync(c.root, { recursive: true, force: true });
  else for (const c of contenders) console.log(`kept ${c.name}: ${c.root}`);
}
