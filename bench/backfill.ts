// Backfill (issue 8): a 10,000-message session mirrored from nothing — `mirror.sync` on an empty
// root — against `git fast-import` writing the very same commits (same trees, author, committer,
// times and messages, so the same commit ids). The two are interleaved rep by rep, with a third
// contender for information: entity-git with its working tree written file by file on the
// calling thread (node-fs storage without its `writeFiles`), as before the tree's files were
// written on a thread beside the pack. A fourth, `reconcile`, is what `entity-git sync` runs for a
// session without a repository (a check, the backfill, the check after it), with the times the
// session's nodes were read from the DAG counted.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  MemoryDag,
  canonicalJson,
  createMirror,
  reconcile,
  type DagSource,
  type DagNode,
  type Layout,
} from '../packages/core/src/index.js';
import type { Storage } from '../packages/git/src/index.js';
import { createNodeMirror, nodeStorage } from '../packages/node-fs/src/index.js';
import { BASE_TIME, Conversation, TURN_FILES } from './lib/conversation.js';
import { diskOf, diskTable, sec, table, type LayoutResult } from './lib/backfill-report.js';
import { fastImport, fastImportStream, rawCommits } from './lib/fast-import.js';
import { git, int, mb, stats, writeResults, type Stats, failWith, fsckOr } from './lib/measure.js';

/** Turns of the session (5 messages each); `BACKFILL_BENCH_TURNS` sets another count (a quick run on a busy machine). */
const TURNS = Number(process.env.BACKFILL_BENCH_TURNS ?? 2000);
const REPS = 3;
const LAYOUTS: Layout[] = ['flat', 'sharded'];

const fail: (message: string) => never = failWith('backfill');
/** `git fsck --strict`; warnings (stderr, exit 0) count as failures too. */
const fsck = (dir: string) => fsckOr(fail, dir);

/** One rep of one layout: where it runs, and the session it backfills. */
interface Rep {
  dag: MemoryDag;
  dir: string;
  layout: Layout;
  rep: number;
  sessionId: string;
}

/** What rep 0's entity-git repository is, which every other contender must equal. */
interface Reference {
  tree: string;
  tip: string;
  shas: string[];
  stream: Buffer;
  streamBuildMs: number;
}

/** The session of `layout`: `TURNS` turns of the bench's conversation, in a DAG of its own. */
async function sessionOf(layout: Layout) {
  const sessionId = `backfill-${layout}`;
  const conv = new Conversation(sessionId, 0xe9717);
  const dag = new MemoryDag();
  await dag.createSession({
    id: sessionId,
    title: `Backfill bench, ${TURNS * TURN_FILES} messages`,
    created_at: BASE_TIME,
  });
  const nodes: DagNode[] = [];
  for (let i = 0; i < TURNS; i++) nodes.push(...conv.turn());
  for (const n of nodes) await dag.addNode(n);
  return { sessionId, dag, nodes };
}

/** entity-git: a new mirror on an empty root, the whole session in one sync. */
async function entityGitRep(r: Rep): Promise<{ ms: number; root: string; repo: string }> {
  const root = join(r.dir, `${r.layout}-${r.rep}`);
  const mirror = createNodeMirror({ dag: r.dag, root, layout: r.layout });
  const e0 = performance.now();
  const res = await mirror.sync(r.sessionId);
  const ms = performance.now() - e0;
  if (res.commitsWritten !== TURNS)
    fail(`${r.layout} rep ${r.rep}: sync wrote ${res.commitsWritten} commits, expected ${TURNS}`);
  return { ms, root, repo: mirror.repoPath(r.sessionId) };
}

/** Rep 0's repository checked (fsck, status, one commit a turn) and the fast-import stream of its commits built. */
function referenceOf(repo: string, layout: Layout, nodes: DagNode[]): Reference {
  fsck(repo);
  const status = git(repo, 'status', '--porcelain');
  if (status !== '') fail(`git status --porcelain in ${repo} is not empty:\n${status.slice(0, 500)}`);
  const commits = rawCommits(repo, fail);
  if (commits.length !== TURNS) fail(`${layout}: main has ${commits.length} commits, expected ${TURNS}`);
  const meta = execFileSync('git', ['cat-file', 'blob', `${commits[0]!.sha}:meta.json`], { cwd: repo });
  const b0 = performance.now();
  const stream = fastImportStream(layout, nodes, commits, meta);
  return {
    stream,
    streamBuildMs: performance.now() - b0,
    tree: git(repo, 'rev-parse', 'HEAD^{tree}').trim(),
    tip: commits.at(-1)!.sha,
    shas: commits.map((c) => c.sha),
  };
}

/** The same backfill, its working tree written on the calling thread. */
async function sameThreadRep(r: Rep, ref: Reference): Promise<number> {
  const { writeFiles: _thread, ...oneThread } = nodeStorage();
  const root = join(r.dir, `${r.layout}-same-thread-${r.rep}`);
  const same = createMirror({
    dag: r.dag,
    root,
    layout: r.layout,
    packTurns: true,
    storage: oneThread satisfies Storage,
  });
  const t0 = performance.now();
  await same.sync(r.sessionId);
  const ms = performance.now() - t0;
  if (git(same.repoPath(r.sessionId), 'rev-parse', 'HEAD').trim() !== ref.tip)
    fail(`${r.layout} rep ${r.rep}: the same-thread tip differs`);
  if (git(same.repoPath(r.sessionId), 'status', '--porcelain') !== '')
    fail(`${r.layout} rep ${r.rep}: git status after the same-thread backfill is not empty`);
  rmSync(root, { recursive: true, force: true });
  return ms;
}

/** `reconcile`: what `entity-git sync` runs for a session without a repository, its reads of the nodes counted. */
async function reconcileRep(r: Rep, ref: Reference): Promise<{ ms: number; reads: number }> {
  const counted = countingDag(r.dag);
  const root = join(r.dir, `${r.layout}-reconcile-${r.rep}`);
  const rec = createNodeMirror({ dag: counted.dag, root, layout: r.layout });
  const r0 = performance.now();
  const report = await reconcile({ dag: counted.dag, mirror: rec, sessions: [r.sessionId] });
  const ms = performance.now() - r0;
  if (report.entries[0]?.action !== 'backfilled')
    fail(`${r.layout} rep ${r.rep}: reconcile ${report.entries[0]?.action ?? 'did nothing'}, expected backfilled`);
  if (git(rec.repoPath(r.sessionId), 'rev-parse', 'HEAD').trim() !== ref.tip)
    fail(`${r.layout} rep ${r.rep}: the reconcile's tip differs`);
  rmSync(root, { recursive: true, force: true });
  return { ms, reads: counted.reads() };
}

/**
 * fast-import: a new repository (git init untimed), the stream piped in, its pack written; then,
 * for information, the working tree and index entity-git also writes (`git reset --hard`). Every
 * commit id and the tip's tree must be entity-git's.
 */
async function fastImportRep(r: Rep, ref: Reference): Promise<{ ms: number; checkout: number; repo: string }> {
  const repo = join(r.dir, `${r.layout}-fast-import-${r.rep}`);
  git(r.dir, 'init', '-q', '-b', 'main', repo);
  const f0 = performance.now();
  await fastImport(repo, ref.stream);
  const ms = performance.now() - f0;
  const c0 = performance.now();
  git(repo, 'reset', '--hard', '-q');
  const checkout = performance.now() - c0;
  const shas = git(repo, 'rev-list', '--reverse', 'refs/heads/main').trim().split('\n');
  const tree = git(repo, 'rev-parse', 'HEAD^{tree}').trim();
  if (tree !== ref.tree) fail(`${r.layout}: fast-import's final tree ${tree} differs from entity-git's ${ref.tree}`);
  const differs = shas.findIndex((sha, i) => sha !== ref.shas[i]);
  if (shas.length !== ref.shas.length || differs >= 0)
    fail(`${r.layout}: fast-import's commit ${differs + 1} is ${shas[differs]}, entity-git's ${ref.shas[differs]}`);
  return { ms, checkout, repo };
}

async function measure(dir: string, layout: Layout, keep: boolean): Promise<LayoutResult> {
  const { sessionId, dag, nodes } = await sessionOf(layout);
  const messageBytes = nodes.reduce((a, n) => a + Buffer.byteLength(canonicalJson(n)), 0);
  const s = { entityGit: [] as number[], sameThread: [] as number[], fastImport: [] as number[] };
  const more = { checkout: [] as number[], reconcile: [] as number[] };
  let reconcileReads = 0;
  let ref: Reference | null = null;
  let disk: LayoutResult['disk'] | null = null;
  for (let rep = 0; rep < REPS; rep++) {
    const r: Rep = { dag, dir, layout, rep, sessionId };
    const e = await entityGitRep(r);
    s.entityGit.push(e.ms);
    // Checked once (every rep writes the same ids, asserted after): the repository is sound.
    ref ??= referenceOf(e.repo, layout, nodes);
    if (git(e.repo, 'rev-parse', 'HEAD').trim() !== ref.tip) fail(`${layout} rep ${rep}: entity-git's tip differs`);
    s.sameThread.push(await sameThreadRep(r, ref));
    const rec = await reconcileRep(r, ref);
    more.reconcile.push(rec.ms);
    reconcileReads = rec.reads;
    const fi = await fastImportRep(r, ref);
    s.fastImport.push(fi.ms);
    more.checkout.push(fi.checkout);
    if (disk === null) {
      fsck(fi.repo);
      disk = { entityGit: diskOf(e.repo), fastImport: diskOf(fi.repo) };
    }
    if (!keep || rep < REPS - 1) {
      rmSync(e.root, { recursive: true, force: true });
      rmSync(fi.repo, { recursive: true, force: true });
    }
  }
  const [e, t, f, c, r] = [s.entityGit, s.sameThread, s.fastImport, more.checkout, more.reconcile].map(stats) as [
    Stats,
    Stats,
    Stats,
    Stats,
    Stats,
  ];
  return {
    layout,
    messages: nodes.length,
    commits: TURNS,
    messageBytes,
    streamBytes: ref!.stream.length,
    streamBuildMs: ref!.streamBuildMs,
    entityGit: e,
    sameThread: t,
    fastImport: f,
    checkout: c,
    reconcile: r,
    reconcileReads,
    ratios: {
      entityGitOverFastImport: e.median / f.median,
      entityGitOverFastImportAndCheckout: e.median / (f.median + c.median),
      sameThreadOverEntityGit: t.median / e.median,
      reconcileOverEntityGit: r.median / e.median,
    },
    disk: disk!,
    finalTree: ref!.tree,
    tip: ref!.tip,
  };
}

/** `dag` with its reads of a session's nodes counted (each `nodesAfter` call is one read). */
function countingDag(dag: DagSource): { dag: DagSource; reads: () => number } {
  let reads = 0;
  const counted: DagSource = {
    listSessions: () => dag.listSessions(),
    getSession: (id) => dag.getSession(id),
    nodesAfter: (id, after, options) => {
      reads++;
      return dag.nodesAfter(id, after, options);
    },
  };
  return { dag: counted, reads: () => reads };
}

export async function run(): Promise<void> {
  const keep = process.argv.includes('--keep');
  const dir = mkdtempSync(join(tmpdir(), 'entity-git-bench-backfill-'));
  const gitVersion = execFileSync('git', ['--version'], { encoding: 'utf8' }).trim();
  console.log(
    `backfill bench: a ${int(TURNS * TURN_FILES)}-message session (${int(TURNS)} turns) from nothing, ${REPS} interleaved reps of entity-git / fast-import`,
  );
  console.log(`node ${process.version}, ${gitVersion}, ${cpus().length} cpus, in ${dir}`);
  const results: LayoutResult[] = [];
  try {
    for (const layout of LAYOUTS) {
      const r = await measure(dir, layout, keep);
      results.push(r);
      console.log(
        `  ${layout}: fast-import stream ${mb(r.streamBytes)} built in ${sec(r.streamBuildMs)} (untimed); fsck, status, final tree ${r.finalTree.slice(0, 12)} and all ${int(r.commits)} commit ids equal`,
      );
    }
  } finally {
    if (keep) console.log(`kept ${dir} (the last rep's repositories)`);
    else rmSync(dir, { recursive: true, force: true });
  }
  console.log('');
  console.log(table(results));
  console.log('');
  console.log(
    'entity-git/fast-import < 2: the goal (within 2x); entity-git also writes the working tree and index, which "+ checkout" (git reset --hard) adds to fast-import',
  );
  console.log(
    'reconcile: `reconcile` of the session on an empty root (what `entity-git sync` runs: check, backfill, check after), its reads of the nodes counted',
  );
  console.log(
    'same-thread tree: entity-git with its working-tree files written one by one on the calling thread, not beside the pack (for information)',
  );
  console.log('');
  console.log('disk right after the backfill (rep 0):');
  console.log(diskTable(results));

  writeResults('backfill', {
    node: process.version,
    git: gitVersion,
    cpus: cpus().length,
    platform: `${process.platform}-${process.arch}`,
    turns: TURNS,
    turnFiles: TURN_FILES,
    reps: REPS,
    unit: 'ms per backfill',
    results,
  });
}
