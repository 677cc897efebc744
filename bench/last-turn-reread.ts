// What reading the newest turn again costs a sync of an application's store
// (`DagSource.lastTurnMayChange`, docs/design.md 'A last turn written again'): an OpenCode
// opencode.db session of H turns, one more turn written by the application (one transaction: a
// prompt, a finished reply, their parts), then `mirror.sync` of two mirrors of it, turn by turn in
// alternating order — the SQL source as it is (the last turn read again) and the same source
// without the flag (only new rows read, as before).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DagSource } from '../packages/core/src/index.js';
import { createNodeMirror } from '../packages/node-fs/src/index.js';
import { openSqlite } from '../packages/sqlite/src/index.js';
import { OPENCODE_DDL, T0 } from '../packages/sqlite/test/app-databases/fixtures/recognised-stores.js';
import { align, failWith, fsckOr, git, ms, ratio, stats, writeResults } from './lib/measure.js';
import { Database, type RawDb } from './lib/app-sqlite.js';

const quick = process.argv.includes('--quick');
const HISTORIES = quick ? [100] : [100, 1000];
const WARMUP = 3;
const TURNS = 20;
const fail = failWith('last-turn-reread');

/** The same SQL source with its flag off: the mirror reads only new rows and pending ones. */
function newRowsOnly(dag: DagSource): DagSource {
  return new Proxy(dag, {
    get: (source, key) => {
      if (key === 'lastTurnMayChange') return false;
      const value = Reflect.get(source, key);
      return typeof value === 'function' ? value.bind(source) : value;
    },
  });
}

/** OpenCode's rows of turn `k`: a prompt and a finished reply, each with its parts. */
function writeTurn(db: RawDb, k: number): void {
  const id = (role: string) => `msg_${String(k).padStart(8, '0')}${role}`;
  const t = (T0 + k * 10) * 1000;
  const message = db.prepare('insert into message values (?, ?, ?, ?, ?)');
  const part = db.prepare('insert into part values (?, ?, ?, ?, ?, ?)');
  db.transaction(() => {
    message.run(id('u'), 'ses_1', t, t, JSON.stringify({ role: 'user', time: { created: t }, agent: 'build' }));
    part.run(`prt_${k}u0`, id('u'), 'ses_1', t, t, JSON.stringify({ type: 'text', text: `Question ${k}` }));
    const reply = { role: 'assistant', parentID: id('u'), time: { created: t + 1, completed: t + 2 }, finish: 'stop' };
    message.run(id('v'), 'ses_1', t + 1, t + 2, JSON.stringify(reply));
    part.run(`prt_${k}v0`, id('v'), 'ses_1', t + 1, t + 1, JSON.stringify({ type: 'step-start' }));
    part.run(`prt_${k}v1`, id('v'), 'ses_1', t + 1, t + 1, JSON.stringify({ type: 'text', text: `Answer ${k}` }));
    const tokens = { input: 100, output: 20, reasoning: 0, cache: { read: 0, write: 0 } };
    part.run(`prt_${k}v2`, id('v'), 'ses_1', t + 2, t + 2, JSON.stringify({ type: 'step-finish', tokens }));
  })();
}

async function measure(dir: string, history: number) {
  const file = join(dir, `opencode-${history}.db`);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  for (const s of OPENCODE_DDL) db.exec(s);
  db.prepare(`insert into session (id, project_id, slug, directory, title, version, time_created, time_updated)
    values ('ses_1', 'prj_1', 'slug', '/work/app', 'Bench', '1.2.0', ?, ?)`).run(T0 * 1000, T0 * 1000);
  for (let k = 1; k <= history; k++) writeTurn(db, k);
  const store = await openSqlite({ file, quietMs: Number.POSITIVE_INFINITY });
  const contenders = [
    { name: 'last turn read again', dag: store.dag as DagSource, samples: [] as number[] },
    { name: 'new rows only', dag: newRowsOnly(store.dag), samples: [] as number[] },
  ].map((c, i) => ({ ...c, mirror: createNodeMirror({ dag: c.dag, root: join(dir, `${history}-${i}`) }) }));
  for (const c of contenders) await c.mirror.sync('ses_1');
  for (let k = history + 1; k <= history + WARMUP + TURNS; k++) {
    writeTurn(db, k);
    // Alternating order: the one that runs first does not always meet a cold page cache.
    for (const c of k % 2 === 0 ? contenders : [...contenders].reverse()) {
      const start = performance.now();
      const r = await c.mirror.sync('ses_1');
      if (r.commitsWritten !== 1) fail(`${c.name}: turn ${k} wrote ${r.commitsWritten} commits`);
      if (k > history + WARMUP) c.samples.push(performance.now() - start);
    }
  }
  const mains = contenders.map((c) => {
    const repo = join(c.mirror.repoPath('ses_1'));
    fsckOr(fail, repo);
    return git(repo, 'rev-parse', 'main').trim();
  });
  if (mains[0] !== mains[1]) fail(`the two mirrors end apart: ${mains.join(' vs ')}`);
  await store.close();
  db.close();
  return contenders.map((c) => ({ name: c.name, ...stats(c.samples) }));
}

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'entity-git-last-turn-'));
  try {
    const results: Record<string, unknown> = {};
    const rows = [['history', 'contender', 'median ms', 'p90 ms', 'vs new rows only']];
    for (const history of HISTORIES) {
      const [again, plain] = await measure(dir, history);
      results[`${history} turns`] = { again, plain };
      for (const s of [again!, plain!])
        rows.push([`${history} turns`, s.name, ms(s.median), ms(s.p90), ratio(s.median / plain!.median)]);
    }
    console.log(`a sync of one new OpenCode turn (${TURNS} turns each, ${WARMUP} warm-up)\n${align(rows)}`);
    writeResults('last-turn-reread', { turns: TURNS, warmup: WARMUP, results });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
