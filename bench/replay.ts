// Replay (issue 8): "open turn K" of a 10,000-message session — the snapshot the UI shows, every
// message at that commit — through entity-git's `mirror.read`, against isomorphic-git reading
// every blob of the commit's tree, and native git (ls-tree + cat-file --batch) for information.
// Each read is done cold (a fresh instance, no in-memory cache) and warm (the same instance again);
// the contenders are interleaved rep by rep, so machine noise lands on all of them alike. Before
// the reps of each turn, every contender reads it once untimed (as the commit bench's warm-up
// turns): the first large reads of a process include its JIT compiling the read path, which is no
// property of a cold instance. Those first reads are reported beside the table, not in it.
import { execFileSync } from 'node:child_process';
import * as nodeFs from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import git from 'isomorphic-git';
import {
  MemoryDag,
  canonicalJson,
  messageFileName,
  shardOf,
  type DagNode,
  type Layout,
} from '../packages/core/src/index.js';
import { createNodeMirror } from '../packages/node-fs/src/index.js';
import { BASE_TIME, Conversation, TURN_FILES } from './lib/conversation.js';
import { int, ms, ratio, stats, writeResults, type Stats, align, failWith, fsckOr } from './lib/measure.js';

const TURNS = 2000;
const OPEN_TURNS = [10, 1000, 2000];
const REPS = 5;
const LAYOUTS: Layout[] = ['flat', 'sharded'];

const fail: (message: string) => never = failWith('replay');
/** `git fsck --strict`; warnings (stderr, exit 0) count as failures too. */
const fsck = (dir: string) => fsckOr(fail, dir);

/** The path of a message under `messages/` in a layout. */
const messagePath = (layout: Layout, n: DagNode): string =>
  layout === 'sharded' ? `${shardOf(n.seq)}/${messageFileName(n)}` : messageFileName(n);

/** A snapshot as path under messages/ → file bytes, plus meta.json's bytes. */
interface Snapshot {
  messages: Map<string, Buffer>;
  meta: Buffer | null;
}

/** isomorphic-git on node:fs: the commit's tree, walked, and every blob read. */
async function isoRead(gitdir: string, commit: string, cache: object): Promise<Snapshot> {
  const fs = nodeFs;
  const out: Snapshot = { messages: new Map(), meta: null };
  const root = await git.readTree({ fs, gitdir, oid: commit, cache });
  for (const e of root.tree) {
    if (e.path === 'meta.json') out.meta = Buffer.from((await git.readBlob({ fs, gitdir, oid: e.oid, cache })).blob);
    if (e.path !== 'messages') continue;
    const walk = async (oid: string, prefix: string): Promise<void> => {
      for (const f of (await git.readTree({ fs, gitdir, oid, cache })).tree) {
        if (f.type === 'tree') await walk(f.oid, `${prefix}${f.path}/`);
        else
          out.messages.set(prefix + f.path, Buffer.from((await git.readBlob({ fs, gitdir, oid: f.oid, cache })).blob));
      }
    };
    await walk(e.oid, '');
  }
  return out;
}

/** Native git: `ls-tree -r` for the entries, then one `cat-file --batch` for every blob. */
function nativeRead(dir: string, commit: string): Snapshot {
  const listing = execFileSync('git', ['ls-tree', '-r', '-z', commit], { cwd: dir, maxBuffer: 1 << 28 }).toString(
    'utf8',
  );
  const entries = listing
    .split('\0')
    .filter((l) => l !== '')
    .map((l) => {
      const tab = l.indexOf('\t');
      return { oid: l.slice(0, tab).split(' ')[2]!, path: l.slice(tab + 1) };
    });
  const batch = execFileSync('git', ['cat-file', '--batch'], {
    cwd: dir,
    input: `${entries.map((e) => e.oid).join('\n')}\n`,
    maxBuffer: 1 << 28,
  });
  const out: Snapshot = { messages: new Map(), meta: null };
  let at = 0;
  for (const e of entries) {
    const nl = batch.indexOf(10, at);
    const header = batch.subarray(at, nl).toString('utf8').split(' ');
    if (header[0] !== e.oid || header[1] !== 'blob') fail(`cat-file --batch answered ${header.join(' ')} for ${e.oid}`);
    const size = Number(header[2]);
    const bytes = batch.subarray(nl + 1, nl + 1 + size);
    at = nl + 1 + size + 1;
    if (e.path === 'meta.json') out.meta = bytes;
    else if (e.path.startsWith('messages/')) out.messages.set(e.path.slice('messages/'.length), bytes);
  }
  return out;
}

/** Every message of `got` is the expected file, byte for byte, and none is missing or extra. */
function sameBytes(who: string, turn: number, expected: Map<string, Buffer>, got: Map<string, Buffer>): void {
  if (got.size !== expected.size) fail(`${who} at turn ${turn}: ${got.size} messages, expected ${expected.size}`);
  for (const [path, bytes] of expected) {
    const b = got.get(path);
    if (!b) fail(`${who} at turn ${turn}: no messages/${path}`);
    if (!b.equals(bytes)) fail(`${who} at turn ${turn}: messages/${path} differs from the DAG node's canonical JSON`);
  }
}

interface TurnResult {
  turn: number;
  messages: number;
  commit: string;
  entityCold: Stats;
  entityWarm: Stats;
  isoCold: Stats;
  isoWarm: Stats;
  native: Stats;
  /** The untimed warm-up read of each contender (a fresh instance, before the reps), ms. */
  first: { entity: number; iso: number };
  ratios: { isoOverEntityCold: number; isoOverEntityWarm: number; nativeOverEntityCold: number };
}

interface LayoutResult {
  layout: Layout;
  messages: number;
  backfillMs: number;
  turns: TurnResult[];
}

async function measure(dir: string, layout: Layout): Promise<LayoutResult> {
  const sessionId = `replay-${layout}`;
  const conv = new Conversation(sessionId, 0xe9717);
  const dag = new MemoryDag();
  await dag.createSession({
    id: sessionId,
    title: `Replay bench, ${TURNS * TURN_FILES} messages`,
    created_at: BASE_TIME,
  });
  const nodes: DagNode[] = [];
  for (let i = 0; i < TURNS; i++) nodes.push(...conv.turn());
  for (const n of nodes) await dag.addNode(n);
  const root = join(dir, layout);
  const b0 = performance.now();
  await createNodeMirror({ dag, root, layout }).sync(sessionId);
  const backfillMs = performance.now() - b0;
  const repo = createNodeMirror({ dag, root }).repoPath(sessionId);
  const gitdir = join(repo, '.git');
  fsck(repo);
  const log = await createNodeMirror({ dag, root }).log(sessionId);
  if (log.length !== TURNS) fail(`${layout}: ${log.length} commits, expected ${TURNS}`);
  const commitOf = (turn: number) => log[log.length - turn]!.sha;

  const turns: TurnResult[] = [];
  for (const turn of OPEN_TURNS) {
    const commit = commitOf(turn);
    const count = turn * TURN_FILES;
    const expected = new Map(nodes.slice(0, count).map((n) => [messagePath(layout, n), Buffer.from(canonicalJson(n))]));
    const s = {
      entityCold: [] as number[],
      entityWarm: [] as number[],
      isoCold: [] as number[],
      isoWarm: [] as number[],
      native: [] as number[],
    };
    // The untimed warm-up reads (timed only to be reported): a fresh instance of each contender.
    let t0 = performance.now();
    const first = await createNodeMirror({ dag, root }).read(sessionId, commit);
    const entityFirst = performance.now() - t0;
    t0 = performance.now();
    const isoFirst = await isoRead(gitdir, commit, {});
    const isoFirstMs = performance.now() - t0;
    nativeRead(repo, commit);
    if (first.messages.length !== count || isoFirst.messages.size !== count)
      fail(`warm-up at turn ${turn}: ${first.messages.length} / ${isoFirst.messages.size} messages, expected ${count}`);
    for (let rep = 0; rep < REPS; rep++) {
      // entity-git: a fresh mirror (what a UI process opening the session has), then the same one again.
      const mirror = createNodeMirror({ dag, root });
      let t = performance.now();
      const view = await mirror.read(sessionId, commit);
      s.entityCold.push(performance.now() - t);
      t = performance.now();
      const again = await mirror.read(sessionId, commit);
      s.entityWarm.push(performance.now() - t);

      // isomorphic-git: a fresh cache object, then the same one again (it holds the pack index).
      const cache = {};
      t = performance.now();
      const iso = await isoRead(gitdir, commit, cache);
      s.isoCold.push(performance.now() - t);
      t = performance.now();
      const isoAgain = await isoRead(gitdir, commit, cache);
      s.isoWarm.push(performance.now() - t);

      t = performance.now();
      const nat = nativeRead(repo, commit);
      s.native.push(performance.now() - t);

      // Outside the clock: all of them returned the very bytes of the DAG's nodes at that turn.
      for (const [who, v] of [
        ['mirror.read (cold)', view],
        ['mirror.read (warm)', again],
      ] as const) {
        if (v.commit !== commit || v.turn !== turn || v.turns !== TURNS)
          fail(`${who} at turn ${turn}: view says turn ${v.turn} of ${v.turns} at ${v.commit}`);
        if (v.prev !== (turn > 1 ? commitOf(turn - 1) : null) || v.next !== (turn < TURNS ? commitOf(turn + 1) : null))
          fail(`${who} at turn ${turn}: wrong prev/next`);
        if (v.messages.some((m, i) => i > 0 && v.messages[i - 1]!.seq >= m.seq))
          fail(`${who} at turn ${turn}: messages not in seq order`);
        sameBytes(
          who,
          turn,
          expected,
          new Map(v.messages.map((m) => [messagePath(layout, m), Buffer.from(canonicalJson(m))])),
        );
        if (iso.meta === null || canonicalJson(v.meta) !== iso.meta.toString('utf8'))
          fail(`${who} at turn ${turn}: meta differs from meta.json`);
      }
      sameBytes('isomorphic-git (cold)', turn, expected, iso.messages);
      sameBytes('isomorphic-git (warm)', turn, expected, isoAgain.messages);
      sameBytes('native git', turn, expected, nat.messages);
      if (!nat.meta || !iso.meta?.equals(nat.meta) || !isoAgain.meta?.equals(nat.meta))
        fail(`meta.json at turn ${turn} differs between isomorphic-git and native git`);
    }
    const r = {
      entityCold: stats(s.entityCold),
      entityWarm: stats(s.entityWarm),
      isoCold: stats(s.isoCold),
      isoWarm: stats(s.isoWarm),
      native: stats(s.native),
    };
    turns.push({
      turn,
      messages: count,
      commit,
      ...r,
      first: { entity: entityFirst, iso: isoFirstMs },
      ratios: {
        isoOverEntityCold: r.isoCold.median / r.entityCold.median,
        isoOverEntityWarm: r.isoWarm.median / r.entityWarm.median,
        nativeOverEntityCold: r.native.median / r.entityCold.median,
      },
    });
  }
  return { layout, messages: nodes.length, backfillMs, turns };
}

function table(results: LayoutResult[]): string {
  const rows = [
    [
      'layout',
      'open turn',
      'messages',
      'entity-git cold',
      'entity-git warm',
      'iso-git cold',
      'iso-git warm',
      'native git',
      'iso/entity-git',
      'iso/entity-git',
      'native/entity-git',
    ],
    [
      '',
      '',
      '',
      'median / p90',
      'median / p90',
      'median / p90',
      'median / p90',
      'median / p90',
      'cold',
      'warm',
      'cold',
    ],
    ...results.flatMap((l) =>
      l.turns.map((r) => [
        l.layout,
        `${int(r.turn)} / ${int(TURNS)}`,
        int(r.messages),
        `${ms(r.entityCold.median)} / ${ms(r.entityCold.p90)}`,
        `${ms(r.entityWarm.median)} / ${ms(r.entityWarm.p90)}`,
        `${ms(r.isoCold.median)} / ${ms(r.isoCold.p90)}`,
        `${ms(r.isoWarm.median)} / ${ms(r.isoWarm.p90)}`,
        `${ms(r.native.median)} / ${ms(r.native.p90)}`,
        ratio(r.ratios.isoOverEntityCold),
        ratio(r.ratios.isoOverEntityWarm),
        ratio(r.ratios.nativeOverEntityCold),
      ]),
    ),
  ];
  return align(rows);
}

export async function run(): Promise<void> {
  const keep = process.argv.includes('--keep');
  const dir = mkdtempSync(join(tmpdir(), 'entity-git-bench-replay-'));
  const gitVersion = execFileSync('git', ['--version'], { encoding: 'utf8' }).trim();
  console.log(
    `replay bench: ms to open turn K of a ${int(TURNS * TURN_FILES)}-message session (every message at that commit), ${REPS} interleaved reps after a warm-up read, cold and warm`,
  );
  console.log(`node ${process.version}, ${gitVersion}, ${cpus().length} cpus, in ${dir}`);
  const results: LayoutResult[] = [];
  try {
    for (const layout of LAYOUTS) {
      const r = await measure(dir, layout);
      results.push(r);
      console.log(
        `  ${layout}: backfill ${ms(r.backfillMs)} ms (untimed); fsck passed; every read returned the DAG's bytes`,
      );
    }
  } finally {
    if (keep) console.log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
  console.log('');
  console.log(table(results));
  console.log('');
  console.log(
    'cold: a fresh mirror / a fresh iso-git cache object; warm: the same one read again (the OS page cache is warm for all);',
  );
  console.log(
    `before the reps of each turn, one untimed warm-up read by each contender (ms, entity-git / iso-git): ${results.flatMap((l) => l.turns.map((r) => `${l.layout} ${int(r.turn)} ${ms(r.first.entity)} / ${ms(r.first.iso)}`)).join('; ')}`,
  );
  console.log(
    'iso/entity-git > 1: entity-git is faster; iso-git reads bytes only, mirror.read also parses every message and walks the branch for turn N of M and prev/next',
  );

  writeResults('replay', {
    node: process.version,
    git: gitVersion,
    cpus: cpus().length,
    platform: `${process.platform}-${process.arch}`,
    turns: TURNS,
    turnFiles: TURN_FILES,
    reps: REPS,
    unit: 'ms per read',
    results,
  });
}
