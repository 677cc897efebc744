// Per-turn commit cost of a session repository (DESIGN.md §3 "Cost"): entity-git's mirror.sync
// against the git CLI on the same files, and against the least any implementation must do.
// The three run interleaved turn by turn, so machine noise lands on all of them alike.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { deflateSync } from 'node:zlib';
// Relative imports: bench/ is not a workspace package, so the root has no @entity-git/* links.
// The path is the one node-fs's own `@entity-git/core` link resolves to, so there is one MemoryDag.
import { MemoryDag, canonicalJson, messageFileName, type DagNode } from '../packages/core/src/index.js';
import { createNodeMirror } from '../packages/node-fs/src/index.js';
import { BASE_TIME, Conversation, TURN_FILES } from './lib/conversation.js';

const WARMUP_TURNS = 3;
const TIMED_TURNS = 30;
// 1,000 messages is the design's reference size; 100 shows how the cost grows with history.
const SIZES = [{ messages: 1000 }, { messages: 100 }];

interface FileOut { name: string; bytes: Buffer }
const filesOf = (nodes: DagNode[]): FileOut[] => nodes.map((n) => ({ name: messageFileName(n), bytes: Buffer.from(canonicalJson(n)) }));

// ---------------------------------------------------------------------------------------------
// The floor: loose objects written by hand, nothing else (no refs, no index, no temp files).

class Floor {
  private readonly objects: string;
  /** messages/ entries in git's order, each already encoded, as a long-lived writer would keep them. */
  private entries: { name: Buffer; bytes: Buffer }[] = [];
  private parent: string | null = null;
  lastTree = '';
  lastCommit = '';
  private readonly metaBlob: Buffer;
  constructor(readonly gitdir: string, metaBytes: Buffer) {
    this.objects = join(gitdir, 'objects');
    // The fan-out directories exist in any repository that has been used for a while.
    for (let i = 0; i < 256; i++) mkdirSync(join(this.objects, i.toString(16).padStart(2, '0')), { recursive: true });
    this.metaBlob = Floor.write(this.objects, 'blob', metaBytes);
  }

  /** Time spent inside writeFileSync: file creation cost varies far more between machines than CPU. */
  static writeMs = 0;

  static write(objects: string, type: string, content: Buffer): Buffer {
    const full = Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content]);
    const sha = createHash('sha1').update(full).digest();
    const hex = sha.toString('hex');
    const deflated = deflateSync(full);
    const t0 = performance.now();
    writeFileSync(join(objects, hex.slice(0, 2), hex.slice(2)), deflated);
    Floor.writeMs += performance.now() - t0;
    return sha;
  }

  commit(files: FileOut[], message: string, time: number): void {
    for (const f of files) {
      const sha = Floor.write(this.objects, 'blob', f.bytes);
      const name = Buffer.from(f.name);
      this.entries.push({ name, bytes: Buffer.concat([Buffer.from('100644 '), name, Buffer.from([0]), sha]) });
    }
    // Nearly sorted already (names start with the seq), so this is a linear pass — but it is done.
    this.entries.sort((a, b) => Buffer.compare(a.name, b.name));
    const messages = Floor.write(this.objects, 'tree', Buffer.concat(this.entries.map((e) => e.bytes)));
    const root = Floor.write(this.objects, 'tree', Buffer.concat([
      Buffer.from('40000 messages\0'), messages, Buffer.from('100644 meta.json\0'), this.metaBlob,
    ]));
    const who = `bench <bench@localhost> ${time} +0000`;
    const commit = Floor.write(this.objects, 'commit', Buffer.from(
      `tree ${root.toString('hex')}\n${this.parent ? `parent ${this.parent}\n` : ''}author ${who}\ncommitter ${who}\n\n${message}\n`,
    ));
    this.lastTree = root.toString('hex');
    this.lastCommit = this.parent = commit.toString('hex');
  }
}

// ---------------------------------------------------------------------------------------------

const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** `git fsck --strict`; warnings (stderr, exit 0) count as failures too. */
function fsck(gitdir: string): void {
  const r = spawnSync('git', ['fsck', '--strict', '--no-dangling'], { cwd: gitdir, encoding: 'utf8' });
  const said = `${r.stdout}${r.stderr}`.split('\n').filter((l) => l.trim() !== '' && !/^(Checking|Verifying)/.test(l)).join('\n');
  if (r.status !== 0 || said !== '') fail(`git fsck --strict in ${gitdir} failed (exit ${r.status}):\n${said}`);
}

function quantile(sorted: number[], q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}
const stats = (samples: number[]) => {
  const s = [...samples].sort((a, b) => a - b);
  return { median: quantile(s, 0.5), p90: quantile(s, 0.9), min: s[0]!, max: s.at(-1)!, samples };
};
type Stats = ReturnType<typeof stats>;

function fail(message: string): never {
  throw new Error(`commit bench: ${message}`);
}

interface SizeResult {
  messagesStart: number;
  messagesEnd: number;
  warmupTurns: number;
  timedTurns: number;
  backfillMs: number;
  entityGit: Stats;
  native: Stats & { addMedian: number; commitMedian: number };
  floor: Stats & { writeMedian: number };
  ratios: { nativeOverEntityGit: number; entityGitOverFloor: number };
  finalTree: string;
}

async function measure(dir: string, messages: number): Promise<SizeResult> {
  const sessionId = `bench-${messages}`;
  const prefillTurns = Math.round(messages / TURN_FILES);
  const conv = new Conversation(sessionId, 0xe9717);

  // entity-git: the session backfilled once, as a mirror attached to an existing DAG would be.
  const dag = new MemoryDag();
  await dag.createSession({ id: sessionId, title: `Bench session, ${messages} messages`, created_at: BASE_TIME });
  const mirror = createNodeMirror({ dag, root: join(dir, 'sessions') });
  const prefill: DagNode[] = [];
  for (let i = 0; i < prefillTurns; i++) prefill.push(...conv.turn());
  for (const n of prefill) await dag.addNode(n);
  const b0 = performance.now();
  await mirror.sync(sessionId);
  const backfillMs = performance.now() - b0;
  const repo = mirror.repoPath(sessionId);
  const metaBytes = readFileSync(join(repo, 'meta.json'));

  // native git: same files, one commit holding the whole history so far.
  const native = join(dir, `native-${messages}`);
  mkdirSync(join(native, 'messages'), { recursive: true });
  git(native, 'init', '-q', '-b', 'main');
  git(native, 'config', 'user.name', 'bench');
  git(native, 'config', 'user.email', 'bench@localhost');
  git(native, 'config', 'commit.gpgsign', 'false');
  writeFileSync(join(native, 'meta.json'), metaBytes);
  const writeNative = (files: FileOut[]) => { for (const f of files) writeFileSync(join(native, 'messages', f.name), f.bytes); };
  writeNative(filesOf(prefill));
  git(native, 'add', '-A');
  git(native, 'commit', '-q', '-m', `prefill: ${prefill.length} messages`);

  // floor: the prefill written through the same code path, untimed, so its objects are all there.
  const floorDir = join(dir, `floor-${messages}.git`);
  git(dir, 'init', '-q', '--bare', '-b', 'main', floorDir);
  const floor = new Floor(floorDir, metaBytes);
  floor.commit(filesOf(prefill), `prefill: ${prefill.length} messages`, BASE_TIME);

  const samples = { entityGit: [] as number[], native: [] as number[], add: [] as number[], commit: [] as number[], floor: [] as number[], floorWrite: [] as number[] };
  let count = prefill.length;
  for (let k = 0; k < WARMUP_TURNS + TIMED_TURNS; k++) {
    const nodes = conv.turn();
    const files = filesOf(nodes);
    const turn = prefillTurns + k + 1;
    const keep = k >= WARMUP_TURNS;
    count += nodes.length;

    for (const n of nodes) await dag.addNode(n);
    const a0 = performance.now();
    const res = await mirror.sync(sessionId);
    const a1 = performance.now();
    if (res.commitsWritten !== 1) fail(`entity-git sync of turn ${turn} wrote ${res.commitsWritten} commits, expected 1`);

    writeNative(files);
    const n0 = performance.now();
    execFileSync('git', ['add', '-A'], { cwd: native, stdio: 'ignore' });
    const n1 = performance.now();
    execFileSync('git', ['commit', '-q', '-m', `turn ${turn}`], { cwd: native, stdio: 'ignore' });
    const n2 = performance.now();

    Floor.writeMs = 0;
    const f0 = performance.now();
    floor.commit(files, `turn ${turn}`, nodes.at(-1)!.created_at);
    const f1 = performance.now();

    if (keep) {
      samples.entityGit.push(a1 - a0);
      samples.native.push(n2 - n0);
      samples.add.push(n1 - n0);
      samples.commit.push(n2 - n1);
      samples.floor.push(f1 - f0);
      samples.floorWrite.push(Floor.writeMs);
    }
  }

  // Figures from a broken repository would mean nothing: check all three ended where they should.
  fsck(repo);
  const status = git(repo, 'status', '--porcelain');
  if (status !== '') fail(`git status --porcelain in ${repo} is not empty:\n${status}`);
  const turns = prefillTurns + WARMUP_TURNS + TIMED_TURNS;
  const entityCommits = Number(git(repo, 'rev-list', '--count', 'HEAD').trim());
  if (entityCommits !== turns) fail(`entity-git repo has ${entityCommits} commits, expected ${turns}`);
  const nativeCommits = Number(git(native, 'rev-list', '--count', 'HEAD').trim());
  if (nativeCommits !== 1 + WARMUP_TURNS + TIMED_TURNS) fail(`native repo has ${nativeCommits} commits, expected 1 prefill + ${WARMUP_TURNS + TIMED_TURNS}`);
  if (git(native, 'status', '--porcelain') !== '') fail('native repo has uncommitted changes');
  git(floorDir, 'update-ref', 'refs/heads/main', floor.lastCommit);
  fsck(floorDir);
  // Same bytes in, same tree out: proves the three did the same work, not merely similar work.
  const entityTree = git(repo, 'rev-parse', 'HEAD^{tree}').trim();
  const nativeTree = git(native, 'rev-parse', 'HEAD^{tree}').trim();
  if (entityTree !== nativeTree || entityTree !== floor.lastTree) {
    fail(`final trees differ: entity-git ${entityTree}, native ${nativeTree}, floor ${floor.lastTree}`);
  }

  const e = stats(samples.entityGit);
  const n = stats(samples.native);
  const f = stats(samples.floor);
  return {
    messagesStart: prefill.length, messagesEnd: count, warmupTurns: WARMUP_TURNS, timedTurns: TIMED_TURNS, backfillMs,
    entityGit: e,
    native: { ...n, addMedian: stats(samples.add).median, commitMedian: stats(samples.commit).median },
    floor: { ...f, writeMedian: stats(samples.floorWrite).median },
    ratios: { nativeOverEntityGit: n.median / e.median, entityGitOverFloor: e.median / f.median },
    finalTree: entityTree,
  };
}

const ms = (x: number) => x.toFixed(x < 10 ? 2 : 1);
const ratio = (x: number) => `${x.toFixed(2)}x`;
const int = (x: number) => x.toLocaleString('en-US');

function table(results: SizeResult[]): string {
  const rows = [
    ['messages', 'entity-git sync', 'native add+commit', 'floor', 'native/entity-git', 'entity-git/floor'],
    ['', 'median / p90', 'median / p90', 'median / p90', '(medians)', '(medians)'],
    ...results.map((r) => [
      `${int(r.messagesStart)} → ${int(r.messagesEnd)}`,
      `${ms(r.entityGit.median)} / ${ms(r.entityGit.p90)}`,
      `${ms(r.native.median)} / ${ms(r.native.p90)}`,
      `${ms(r.floor.median)} / ${ms(r.floor.p90)}`,
      ratio(r.ratios.nativeOverEntityGit),
      ratio(r.ratios.entityGitOverFloor),
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows.map((row) => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('   ')).join('\n');
}

export async function run(): Promise<void> {
  const keep = process.argv.includes('--keep');
  const dir = mkdtempSync(join(tmpdir(), 'entity-git-bench-'));
  const gitVersion = execFileSync('git', ['--version'], { encoding: 'utf8' }).trim();
  console.log(`commit bench: ms per turn of ${TURN_FILES} files, ${TIMED_TURNS} turns (after ${WARMUP_TURNS} warm-up), interleaved entity-git / native / floor`);
  console.log(`node ${process.version}, ${gitVersion}, ${cpus().length} cpus, in ${dir}`);
  const results: SizeResult[] = [];
  try {
    for (const size of SIZES) {
      const r = await measure(dir, size.messages);
      results.push(r);
      console.log(`  ${int(r.messagesStart)} → ${int(r.messagesEnd)} messages: backfill ${ms(r.backfillMs)} ms (untimed), native = add ${ms(r.native.addMedian)} + commit ${ms(r.native.commitMedian)} ms, floor's writeFileSync ${ms(r.floor.writeMedian)} ms; fsck/status/tree checks passed`);
    }
  } finally {
    if (keep) console.log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
  console.log('');
  console.log(table(results));
  console.log('');
  console.log('native/entity-git > 1: entity-git is faster than the git CLI; entity-git/floor: what the mirror costs over bare hashing+deflate+write');

  const outDir = new URL('./out/', import.meta.url);
  mkdirSync(outDir, { recursive: true });
  const out = new URL('commit.json', outDir);
  writeFileSync(out, JSON.stringify({
    bench: 'commit', date: new Date().toISOString(), node: process.version, git: gitVersion, cpus: cpus().length,
    platform: `${process.platform}-${process.arch}`, turnFiles: TURN_FILES, unit: 'ms per turn', results,
  }, null, 2) + '\n');
  console.log(`results: ${out.pathname}`);
}
