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
import {
  MemoryDag,
  Store,
  canonicalJson,
  messageFileName,
  packRepository,
  shardOf,
  type DagNode,
  type Layout,
} from '../packages/core/src/index.js';
import { createNodeMirror, nativeRepack, nodeStorage } from '../packages/node-fs/src/index.js';
import { BASE_TIME, Conversation, TURN_FILES } from './lib/conversation.js';
import {
  bytesUnder,
  git,
  int,
  mb,
  ms,
  ratio,
  stats,
  writeResults,
  type Stats,
  align,
  failWith,
  fsckOr,
} from './lib/measure.js';

const WARMUP_TURNS = 3;
const TIMED_TURNS = 30;
// 1,000 messages is the design's reference size; 100 and 10,000 show how the cost grows with
// history, in both layouts. `--quick` leaves out the 10,000-message sessions.
const ALL_SIZES: { messages: number; layout: Layout }[] = [
  { messages: 1000, layout: 'flat' },
  { messages: 100, layout: 'flat' },
  { messages: 10_000, layout: 'flat' },
  { messages: 100, layout: 'sharded' },
  { messages: 1000, layout: 'sharded' },
  { messages: 10_000, layout: 'sharded' },
];

interface FileOut {
  name: string;
  shard: string;
  bytes: Buffer;
}
const filesOf = (nodes: DagNode[]): FileOut[] =>
  nodes.map((n) => ({ name: messageFileName(n), shard: shardOf(n.seq), bytes: Buffer.from(canonicalJson(n)) }));

// ---------------------------------------------------------------------------------------------
// The floor: loose objects written by hand, nothing else (no refs, no index, no temp files).

class Floor {
  private readonly objects: string;
  /** messages/ entries in git's order, each already encoded, as a long-lived writer would keep them (by shard when sharded). */
  private shards = new Map<string, { name: Buffer; bytes: Buffer }[]>();
  /** Sharded: each shard's tree entry, kept until the shard changes. */
  private shardEntries = new Map<string, Buffer>();
  private parent: string | null = null;
  lastTree = '';
  lastCommit = '';
  private readonly metaBlob: Buffer;
  constructor(
    readonly gitdir: string,
    metaBytes: Buffer,
    private readonly layout: Layout,
  ) {
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
    const changed = new Set<string>();
    for (const f of files) {
      const sha = Floor.write(this.objects, 'blob', f.bytes);
      const name = Buffer.from(f.name);
      const shard = this.layout === 'sharded' ? f.shard : '';
      const list = this.shards.get(shard) ?? [];
      this.shards.set(shard, list);
      list.push({ name, bytes: Buffer.concat([Buffer.from('100644 '), name, Buffer.from([0]), sha]) });
      changed.add(shard);
    }
    let messages: Buffer;
    if (this.layout === 'flat') {
      const entries = this.shards.get('')!;
      // Nearly sorted already (names start with the seq), so this is a linear pass — but it is done.
      entries.sort((a, b) => Buffer.compare(a.name, b.name));
      messages = Floor.write(this.objects, 'tree', Buffer.concat(entries.map((e) => e.bytes)));
    } else {
      for (const shard of changed) {
        const entries = this.shards.get(shard)!;
        entries.sort((a, b) => Buffer.compare(a.name, b.name));
        const tree = Floor.write(this.objects, 'tree', Buffer.concat(entries.map((e) => e.bytes)));
        this.shardEntries.set(shard, Buffer.concat([Buffer.from(`40000 ${shard}\0`), tree]));
      }
      messages = Floor.write(
        this.objects,
        'tree',
        Buffer.concat([...this.shardEntries.keys()].sort().map((k) => this.shardEntries.get(k)!)),
      );
    }
    const root = Floor.write(
      this.objects,
      'tree',
      Buffer.concat([Buffer.from('40000 messages\0'), messages, Buffer.from('100644 meta.json\0'), this.metaBlob]),
    );
    const who = `bench <bench@localhost> ${time} +0000`;
    const commit = Floor.write(
      this.objects,
      'commit',
      Buffer.from(
        `tree ${root.toString('hex')}\n${this.parent ? `parent ${this.parent}\n` : ''}author ${who}\ncommitter ${who}\n\n${message}\n`,
      ),
    );
    this.lastTree = root.toString('hex');
    this.lastCommit = this.parent = commit.toString('hex');
  }
}

// ---------------------------------------------------------------------------------------------

const fail: (message: string) => never = failWith('commit');
/** `git fsck --strict`; warnings (stderr, exit 0) count as failures too. */
const fsck = (dir: string) => fsckOr(fail, dir);

interface DiskResult {
  /** Canonical JSON of every message: the bytes the repository exists to keep. */
  messageBytes: number;
  loose: number;
  packedJs: number;
  packedNative: number;
  packJsMs: number;
  packNativeMs: number;
}

interface SizeResult {
  layout: Layout;
  disk: DiskResult;
  messagesStart: number;
  messagesEnd: number;
  warmupTurns: number;
  timedTurns: number;
  backfillMs: number;
  entityGit: Stats;
  /** The same mirror with `packTurns: false`: a turn's objects as loose files (core's default). */
  entityGitLoose: Stats;
  native: Stats & { addMedian: number; commitMedian: number };
  floor: Stats & { writeMedian: number };
  ratios: { nativeOverEntityGit: number; entityGitOverFloor: number };
  finalTree: string;
}

async function measure(dir: string, messages: number, layout: Layout): Promise<SizeResult> {
  const sessionId = `bench-${layout}-${messages}`;
  const prefillTurns = Math.round(messages / TURN_FILES);
  const conv = new Conversation(sessionId, 0xe9717);

  // entity-git: the session backfilled once, as a mirror attached to an existing DAG would be.
  const dag = new MemoryDag();
  await dag.createSession({ id: sessionId, title: `Bench session, ${messages} messages`, created_at: BASE_TIME });
  const mirror = createNodeMirror({ dag, root: join(dir, 'sessions'), layout });
  const looseMirror = createNodeMirror({ dag, root: join(dir, 'sessions-loose'), layout, packTurns: false });
  const prefill: DagNode[] = [];
  for (let i = 0; i < prefillTurns; i++) prefill.push(...conv.turn());
  for (const n of prefill) await dag.addNode(n);
  const b0 = performance.now();
  await mirror.sync(sessionId);
  const backfillMs = performance.now() - b0;
  await looseMirror.sync(sessionId);
  const repo = mirror.repoPath(sessionId);
  const metaBytes = readFileSync(join(repo, 'meta.json'));

  // native git: same files, one commit holding the whole history so far.
  const native = join(dir, `native-${layout}-${messages}`);
  mkdirSync(join(native, 'messages'), { recursive: true });
  git(native, 'init', '-q', '-b', 'main');
  git(native, 'config', 'user.name', 'bench');
  git(native, 'config', 'user.email', 'bench@localhost');
  git(native, 'config', 'commit.gpgsign', 'false');
  writeFileSync(join(native, 'meta.json'), metaBytes);
  const writeNative = (files: FileOut[]) => {
    for (const f of files) {
      const at = layout === 'sharded' ? join(native, 'messages', f.shard) : join(native, 'messages');
      if (layout === 'sharded') mkdirSync(at, { recursive: true });
      writeFileSync(join(at, f.name), f.bytes);
    }
  };
  writeNative(filesOf(prefill));
  git(native, 'add', '-A');
  git(native, 'commit', '-q', '-m', `prefill: ${prefill.length} messages`);

  // floor: the prefill written through the same code path, untimed, so its objects are all there.
  const floorDir = join(dir, `floor-${layout}-${messages}.git`);
  git(dir, 'init', '-q', '--bare', '-b', 'main', floorDir);
  const floor = new Floor(floorDir, metaBytes, layout);
  floor.commit(filesOf(prefill), `prefill: ${prefill.length} messages`, BASE_TIME);

  // What the file system still has to do for earlier sizes (writeback, and the discards of the
  // copies deleted after them, on a disk mounted with discard) is done before this size's clock runs.
  execFileSync('sync');
  const samples = {
    entityGit: [] as number[],
    entityGitLoose: [] as number[],
    native: [] as number[],
    add: [] as number[],
    commit: [] as number[],
    floor: [] as number[],
    floorWrite: [] as number[],
  };
  let count = prefill.length;
  let messageBytes = filesOf(prefill).reduce((a, f) => a + f.bytes.length, 0);
  for (let k = 0; k < WARMUP_TURNS + TIMED_TURNS; k++) {
    const nodes = conv.turn();
    const files = filesOf(nodes);
    messageBytes += files.reduce((a, f) => a + f.bytes.length, 0);
    const turn = prefillTurns + k + 1;
    const keep = k >= WARMUP_TURNS;
    count += nodes.length;

    for (const n of nodes) await dag.addNode(n);
    const a0 = performance.now();
    const res = await mirror.sync(sessionId);
    const a1 = performance.now();
    if (res.commitsWritten !== 1)
      fail(`entity-git sync of turn ${turn} wrote ${res.commitsWritten} commits, expected 1`);
    const l0 = performance.now();
    const resLoose = await looseMirror.sync(sessionId);
    const l1 = performance.now();
    if (resLoose.commitsWritten !== 1)
      fail(`entity-git (loose) sync of turn ${turn} wrote ${resLoose.commitsWritten} commits, expected 1`);

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
      samples.entityGitLoose.push(l1 - l0);
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
  if (nativeCommits !== 1 + WARMUP_TURNS + TIMED_TURNS)
    fail(`native repo has ${nativeCommits} commits, expected 1 prefill + ${WARMUP_TURNS + TIMED_TURNS}`);
  if (git(native, 'status', '--porcelain') !== '') fail('native repo has uncommitted changes');
  git(floorDir, 'update-ref', 'refs/heads/main', floor.lastCommit);
  fsck(floorDir);
  // Same bytes in, same tree out: proves the three did the same work, not merely similar work.
  const entityTree = git(repo, 'rev-parse', 'HEAD^{tree}').trim();
  const looseRepo = looseMirror.repoPath(sessionId);
  fsck(looseRepo);
  if (git(looseRepo, 'rev-parse', 'HEAD').trim() !== git(repo, 'rev-parse', 'HEAD').trim())
    fail('the loose-object mirror ended at another commit');
  const nativeTree = git(native, 'rev-parse', 'HEAD^{tree}').trim();
  if (entityTree !== nativeTree || entityTree !== floor.lastTree) {
    fail(`final trees differ: entity-git ${entityTree}, native ${nativeTree}, floor ${floor.lastTree}`);
  }

  // Disk: the repository as the turns left it (loose), then packed — by entity-git's own packer
  // in one copy, by git repack in another (the background packer uses one or the other).
  const objectsOf = (gitdir: string) => bytesUnder(join(gitdir, 'objects'));
  const loose = objectsOf(join(repo, '.git'));
  const copyJs = join(dir, `copy-js-${layout}-${messages}`);
  const copyNative = join(dir, `copy-native-${layout}-${messages}`);
  execFileSync('cp', ['-a', repo, copyJs]);
  execFileSync('cp', ['-a', repo, copyNative]);
  const j0 = performance.now();
  await packRepository(new Store(nodeStorage()), join(copyJs, '.git'));
  const packJsMs = performance.now() - j0;
  const q0 = performance.now();
  await nativeRepack()(join(copyNative, '.git'));
  const packNativeMs = performance.now() - q0;
  for (const copy of [copyJs, copyNative]) {
    fsck(copy);
    if (git(copy, 'rev-parse', 'HEAD').trim() !== git(repo, 'rev-parse', 'HEAD').trim())
      fail(`packing ${copy} changed HEAD`);
  }
  const disk: DiskResult = {
    messageBytes,
    loose,
    packedJs: objectsOf(join(copyJs, '.git')),
    packedNative: objectsOf(join(copyNative, '.git')),
    packJsMs,
    packNativeMs,
  };
  rmSync(copyJs, { recursive: true, force: true });
  rmSync(copyNative, { recursive: true, force: true });

  const e = stats(samples.entityGit);
  const n = stats(samples.native);
  const f = stats(samples.floor);
  return {
    layout,
    disk,
    messagesStart: prefill.length,
    messagesEnd: count,
    warmupTurns: WARMUP_TURNS,
    timedTurns: TIMED_TURNS,
    backfillMs,
    entityGit: e,
    entityGitLoose: stats(samples.entityGitLoose),
    native: { ...n, addMedian: stats(samples.add).median, commitMedian: stats(samples.commit).median },
    floor: { ...f, writeMedian: stats(samples.floorWrite).median },
    ratios: { nativeOverEntityGit: n.median / e.median, entityGitOverFloor: e.median / f.median },
    finalTree: entityTree,
  };
}

function table(results: SizeResult[]): string {
  const rows = [
    [
      'layout',
      'messages',
      'entity-git sync',
      'native add+commit',
      'floor',
      'native/entity-git',
      'entity-git/floor',
      'vs own 100',
      'loose turns',
      'loose/pack',
    ],
    [
      '',
      '',
      'median / p90',
      'median / p90',
      'median / p90',
      '(medians)',
      '(medians)',
      '(medians)',
      'median / p90',
      '(medians)',
    ],
    ...results.map((r) => [
      r.layout,
      `${int(r.messagesStart)} → ${int(r.messagesEnd)}`,
      `${ms(r.entityGit.median)} / ${ms(r.entityGit.p90)}`,
      `${ms(r.native.median)} / ${ms(r.native.p90)}`,
      `${ms(r.floor.median)} / ${ms(r.floor.p90)}`,
      ratio(r.ratios.nativeOverEntityGit),
      ratio(r.ratios.entityGitOverFloor),
      ownSmall(results, r),
      `${ms(r.entityGitLoose.median)} / ${ms(r.entityGitLoose.p90)}`,
      ratio(r.entityGitLoose.median / r.entityGit.median),
    ]),
  ];
  return align(rows);
}

/** This size's median over the same layout's median at 100 messages. */
function ownSmall(results: SizeResult[], r: SizeResult): string {
  const small = results.find((x) => x.layout === r.layout && x.messagesStart === 100);
  return small ? ratio(r.entityGit.median / small.entityGit.median) : '';
}

function diskTable(results: SizeResult[]): string {
  const rows = [
    [
      'layout',
      'messages',
      'message JSON',
      'repo, loose',
      'packed (entity-git)',
      'packed (git repack)',
      'loose/JSON',
      'packed/JSON',
      'pack time js / git',
    ],
    ...results.map((r) => [
      r.layout,
      int(r.messagesEnd),
      mb(r.disk.messageBytes),
      mb(r.disk.loose),
      mb(r.disk.packedJs),
      mb(r.disk.packedNative),
      ratio(r.disk.loose / r.disk.messageBytes),
      `${ratio(r.disk.packedJs / r.disk.messageBytes)} / ${ratio(r.disk.packedNative / r.disk.messageBytes)}`,
      `${(r.disk.packJsMs / 1000).toFixed(2)} s / ${(r.disk.packNativeMs / 1000).toFixed(2)} s`,
    ]),
  ];
  return align(rows);
}

/**
 * One size, in this process: what a child runs (`--size=<layout>:<messages>`), printing its
 * result as the last line of its output.
 */
async function runOne(spec: string): Promise<void> {
  const [layout, messages] = spec.split(':');
  const keep = process.argv.includes('--keep');
  const dir = mkdtempSync(join(tmpdir(), 'entity-git-bench-'));
  try {
    const r = await measure(dir, Number(messages), layout as Layout);
    console.log(
      `  ${r.layout}, ${int(r.messagesStart)} → ${int(r.messagesEnd)} messages: backfill ${ms(r.backfillMs)} ms (untimed), native = add ${ms(r.native.addMedian)} + commit ${ms(r.native.commitMedian)} ms, floor's writeFileSync ${ms(r.floor.writeMedian)} ms; fsck/status/tree checks passed${keep ? `; kept ${dir}` : ''}`,
    );
    console.log(`${RESULT}${JSON.stringify(r)}`);
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

const RESULT = 'RESULT ';

export async function run(): Promise<void> {
  const one = process.argv.find((a) => a.startsWith('--size='));
  if (one !== undefined) return runOne(one.slice('--size='.length));
  const gitVersion = execFileSync('git', ['--version'], { encoding: 'utf8' }).trim();
  console.log(
    `commit bench: ms per turn of ${TURN_FILES} files, ${TIMED_TURNS} turns (after ${WARMUP_TURNS} warm-up), interleaved entity-git / native / floor; each size in a process of its own`,
  );
  console.log(`node ${process.version}, ${gitVersion}, ${cpus().length} cpus, in ${tmpdir()}`);
  const results: SizeResult[] = [];
  const only = process.argv.find((a) => a.startsWith('--layout='))?.slice('--layout='.length);
  const sizes = ALL_SIZES.filter(
    (x) => (only === undefined || x.layout === only) && (!process.argv.includes('--quick') || x.messages < 10_000),
  );
  for (const size of sizes) {
    // A process per size: one size's heap, caches and files never weigh on the next one's turns.
    const child = spawnSync(
      process.execPath,
      [
        ...process.execArgv,
        process.argv[1]!,
        'commit',
        `--size=${size.layout}:${size.messages}`,
        ...process.argv.filter((a) => a === '--keep'),
      ],
      { encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const lines = child.stdout.trim().split('\n');
    const last = lines.at(-1) ?? '';
    if (child.status !== 0 || !last.startsWith(RESULT))
      fail(`the ${size.layout} ${size.messages}-message size failed (exit ${child.status}):\n${child.stdout}`);
    for (const line of lines.slice(0, -1)) console.log(line);
    results.push(JSON.parse(last.slice(RESULT.length)) as SizeResult);
  }
  console.log('');
  console.log(table(results));
  console.log('');
  console.log(
    'native/entity-git > 1: entity-git is faster than the git CLI; entity-git/floor: what the mirror costs over bare hashing+deflate+write;',
  );
  console.log("vs own 100: the per-turn cost at this size over the same layout's at 100 messages;");
  console.log(
    "loose turns: the same mirror with packTurns: false (each object a loose file), interleaved too; loose/pack > 1: the turn's pack is cheaper",
  );
  console.log('');
  console.log('disk (objects/ only, after the timed turns; packed copies made after the run):');
  console.log(diskTable(results));

  writeResults('commit', {
    node: process.version,
    git: gitVersion,
    cpus: cpus().length,
    platform: `${process.platform}-${process.arch}`,
    turnFiles: TURN_FILES,
    unit: 'ms per turn',
    results,
  });
}
