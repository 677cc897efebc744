// Backfill (issue 8): a 10,000-message session mirrored from nothing — `mirror.sync` on an empty
// root — against `git fast-import` writing the very same commits (same trees, author, committer,
// times and messages, so the same commit ids). The two are interleaved rep by rep, with a third
// contender for information: entity-git with its working tree written file by file on the
// calling thread (node-fs storage without its `writeFiles`), as before the tree's files were
// written on a thread beside the pack. A fourth, `reconcile`, is what `entity-git sync` runs for a
// session without a repository (a check, the backfill, the check after it), with the times the
// session's nodes were read from the DAG counted.
import { execFileSync, spawn } from 'node:child_process';
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
  messageFileName,
  shardOf,
  type DagNode,
  type Layout,
} from '../packages/core/src/index.js';
import type { Storage } from '../packages/git/src/index.js';
import { createNodeMirror, nodeStorage } from '../packages/node-fs/src/index.js';
import { BASE_TIME, Conversation, TURN_FILES } from './lib/conversation.js';
import {
  bytesUnder,
  git,
  int,
  mb,
  ratio,
  stats,
  writeResults,
  type Stats,
  align,
  failWith,
  fsckOr,
} from './lib/measure.js';

/** Turns of the session (5 messages each); `BACKFILL_BENCH_TURNS` sets another count (a quick run on a busy machine). */
const TURNS = Number(process.env.BACKFILL_BENCH_TURNS ?? 2000);
const REPS = 3;
const LAYOUTS: Layout[] = ['flat', 'sharded'];

const fail: (message: string) => never = failWith('backfill');
/** `git fsck --strict`; warnings (stderr, exit 0) count as failures too. */
const fsck = (dir: string) => fsckOr(fail, dir);

/** A commit as entity-git wrote it: its id, its author and committer lines verbatim, its message bytes. */
interface RawCommit {
  sha: string;
  author: string;
  committer: string;
  message: Buffer;
}

/** Every commit of `main`, oldest first, read back from the entity-git repository. */
function rawCommits(repo: string): RawCommit[] {
  const shas = git(repo, 'rev-list', '--reverse', 'refs/heads/main').trim().split('\n');
  const batch = execFileSync('git', ['cat-file', '--batch'], {
    cwd: repo,
    input: `${shas.join('\n')}\n`,
    maxBuffer: 1 << 28,
  });
  const out: RawCommit[] = [];
  let at = 0;
  for (const sha of shas) {
    const nl = batch.indexOf(10, at);
    const [oid, type, size] = batch.subarray(at, nl).toString('utf8').split(' ');
    if (oid !== sha || type !== 'commit') fail(`cat-file --batch answered ${oid} ${type} for ${sha}`);
    const body = batch.subarray(nl + 1, nl + 1 + Number(size));
    at = nl + 1 + Number(size) + 1;
    const split = body.indexOf('\n\n');
    const headers = body.subarray(0, split).toString('utf8').split('\n');
    const line = (key: string) =>
      headers.find((h) => h.startsWith(`${key} `))?.slice(key.length + 1) ?? fail(`commit ${sha} has no ${key}`);
    if (headers.some((h) => !/^(tree|parent|author|committer) /.test(h)))
      fail(`commit ${sha} has a header fast-import cannot reproduce`);
    out.push({ sha, author: line('author'), committer: line('committer'), message: body.subarray(split + 2) });
  }
  return out;
}

/**
 * The fast-import stream of the same history: one commit per turn on refs/heads/main, each
 * adding the turn's message files (inline data) to its parent's tree; meta.json in the first.
 * Built from the DAG and the commits' headers, before the clock starts.
 */
function fastImportStream(layout: Layout, nodes: DagNode[], commits: RawCommit[], meta: Buffer): Buffer {
  const chunks: Buffer[] = [];
  const data = (bytes: Buffer) => {
    chunks.push(Buffer.from(`data ${bytes.length}\n`), bytes, Buffer.from('\n'));
  };
  commits.forEach((c, i) => {
    chunks.push(Buffer.from(`commit refs/heads/main\nmark :${i + 1}\nauthor ${c.author}\ncommitter ${c.committer}\n`));
    data(c.message);
    if (i > 0) chunks.push(Buffer.from(`from :${i}\n`));
    if (i === 0) {
      chunks.push(Buffer.from('M 100644 inline meta.json\n'));
      data(meta);
    }
    for (const n of nodes.slice(i * TURN_FILES, (i + 1) * TURN_FILES)) {
      const path =
        layout === 'sharded' ? `messages/${shardOf(n.seq)}/${messageFileName(n)}` : `messages/${messageFileName(n)}`;
      chunks.push(Buffer.from(`M 100644 inline ${path}\n`));
      data(Buffer.from(canonicalJson(n)));
    }
    chunks.push(Buffer.from('\n'));
  });
  chunks.push(Buffer.from('done\n'));
  return Buffer.concat(chunks);
}

/** `git fast-import --quiet --done` in `repo`, the stream piped to it; resolves when it has exited. */
function fastImport(repo: string, stream: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['fast-import', '--quiet', '--done'], { cwd: repo, stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`backfill bench: git fast-import exited ${code}: ${stderr}`)),
    );
    // One write: the whole stream is in memory, the pipe's back-pressure paces it.
    child.stdin.end(stream);
  });
}

interface Disk {
  objects: number;
  gitdir: number;
  worktree: number;
}
const diskOf = (repo: string): Disk => {
  const gitdir = bytesUnder(join(repo, '.git'));
  return { objects: bytesUnder(join(repo, '.git', 'objects')), gitdir, worktree: bytesUnder(repo) - gitdir };
};

interface LayoutResult {
  layout: Layout;
  messages: number;
  commits: number;
  messageBytes: number;
  streamBytes: number;
  streamBuildMs: number;
  entityGit: Stats;
  sameThread: Stats;
  fastImport: Stats;
  checkout: Stats;
  reconcile: Stats;
  /** Reads of the session's nodes (`nodesAfter` calls) in one reconcile. */
  reconcileReads: number;
  ratios: {
    entityGitOverFastImport: number;
    entityGitOverFastImportAndCheckout: number;
    sameThreadOverEntityGit: number;
    reconcileOverEntityGit: number;
  };
  disk: { entityGit: Disk; fastImport: Disk };
  finalTree: string;
  tip: string;
}

async function measure(dir: string, layout: Layout, keep: boolean): Promise<LayoutResult> {
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
  const messageBytes = nodes.reduce((a, n) => a + Buffer.byteLength(canonicalJson(n)), 0);

  const s = {
    entityGit: [] as number[],
    sameThread: [] as number[],
    fastImport: [] as number[],
    checkout: [] as number[],
    reconcile: [] as number[],
  };
  let reconcileReads = 0;
  let stream: Buffer = Buffer.alloc(0);
  let streamBuildMs = 0;
  let reference: { tree: string; tip: string; shas: string[] } | null = null;
  let disk: LayoutResult['disk'] | null = null;
  for (let rep = 0; rep < REPS; rep++) {
    // entity-git: a new mirror on an empty root, the whole session in one sync.
    const root = join(dir, `${layout}-${rep}`);
    const mirror = createNodeMirror({ dag, root, layout });
    const e0 = performance.now();
    const res = await mirror.sync(sessionId);
    s.entityGit.push(performance.now() - e0);
    if (res.commitsWritten !== TURNS)
      fail(`${layout} rep ${rep}: sync wrote ${res.commitsWritten} commits, expected ${TURNS}`);
    const repo = mirror.repoPath(sessionId);

    if (reference === null) {
      // Checked once (every rep writes the same ids, asserted below): the repository is sound.
      fsck(repo);
      const status = git(repo, 'status', '--porcelain');
      if (status !== '') fail(`git status --porcelain in ${repo} is not empty:\n${status.slice(0, 500)}`);
      const commits = rawCommits(repo);
      if (commits.length !== TURNS) fail(`${layout}: main has ${commits.length} commits, expected ${TURNS}`);
      const meta = execFileSync('git', ['cat-file', 'blob', `${commits[0]!.sha}:meta.json`], { cwd: repo });
      const b0 = performance.now();
      stream = fastImportStream(layout, nodes, commits, meta);
      streamBuildMs = performance.now() - b0;
      reference = {
        tree: git(repo, 'rev-parse', 'HEAD^{tree}').trim(),
        tip: commits.at(-1)!.sha,
        shas: commits.map((c) => c.sha),
      };
    } else if (git(repo, 'rev-parse', 'HEAD').trim() !== reference.tip) {
      fail(`${layout} rep ${rep}: entity-git's tip differs from rep 0's`);
    }

    // The same, its working tree written on the calling thread.
    const { writeFiles: _thread, ...oneThread } = nodeStorage();
    const sameRoot = join(dir, `${layout}-same-thread-${rep}`);
    const same = createMirror({ dag, root: sameRoot, layout, packTurns: true, storage: oneThread satisfies Storage });
    const t0 = performance.now();
    await same.sync(sessionId);
    s.sameThread.push(performance.now() - t0);
    if (git(same.repoPath(sessionId), 'rev-parse', 'HEAD').trim() !== reference!.tip)
      fail(`${layout} rep ${rep}: the same-thread tip differs`);
    if (git(same.repoPath(sessionId), 'status', '--porcelain') !== '')
      fail(`${layout} rep ${rep}: git status after the same-thread backfill is not empty`);
    rmSync(sameRoot, { recursive: true, force: true });

    // reconcile: what `entity-git sync` runs for a session without a repository.
    const counted = countingDag(dag);
    const recRoot = join(dir, `${layout}-reconcile-${rep}`);
    const rec = createNodeMirror({ dag: counted.dag, root: recRoot, layout });
    const r0 = performance.now();
    const report = await reconcile({ dag: counted.dag, mirror: rec, sessions: [sessionId] });
    s.reconcile.push(performance.now() - r0);
    reconcileReads = counted.reads();
    if (report.entries[0]?.action !== 'backfilled')
      fail(`${layout} rep ${rep}: reconcile ${report.entries[0]?.action ?? 'did nothing'}, expected backfilled`);
    if (git(rec.repoPath(sessionId), 'rev-parse', 'HEAD').trim() !== reference!.tip)
      fail(`${layout} rep ${rep}: the reconcile's tip differs`);
    rmSync(recRoot, { recursive: true, force: true });

    // fast-import: a new repository (git init untimed), the stream piped in, its pack written.
    const fi = join(dir, `${layout}-fast-import-${rep}`);
    git(dir, 'init', '-q', '-b', 'main', fi);
    const f0 = performance.now();
    await fastImport(fi, stream);
    s.fastImport.push(performance.now() - f0);
    // For information: the working tree and index entity-git also writes.
    const c0 = performance.now();
    git(fi, 'reset', '--hard', '-q');
    s.checkout.push(performance.now() - c0);

    // The same commits, not merely the same final tree: every id, and the tree at the tip.
    const fiShas = git(fi, 'rev-list', '--reverse', 'refs/heads/main').trim().split('\n');
    const fiTree = git(fi, 'rev-parse', 'HEAD^{tree}').trim();
    if (fiTree !== reference.tree)
      fail(`${layout}: fast-import's final tree ${fiTree} differs from entity-git's ${reference.tree}`);
    const differs = fiShas.findIndex((sha, i) => sha !== reference!.shas[i]);
    if (fiShas.length !== reference.shas.length || differs >= 0)
      fail(
        `${layout}: fast-import's commit ${differs + 1} is ${fiShas[differs]}, entity-git's ${reference.shas[differs]}`,
      );

    if (disk === null) {
      fsck(fi);
      disk = { entityGit: diskOf(repo), fastImport: diskOf(fi) };
    }
    if (!keep || rep < REPS - 1) {
      rmSync(root, { recursive: true, force: true });
      rmSync(fi, { recursive: true, force: true });
    }
  }
  const e = stats(s.entityGit);
  const t = stats(s.sameThread);
  const f = stats(s.fastImport);
  const c = stats(s.checkout);
  const r = stats(s.reconcile);
  return {
    layout,
    messages: nodes.length,
    commits: TURNS,
    messageBytes,
    streamBytes: stream.length,
    streamBuildMs,
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
    finalTree: reference!.tree,
    tip: reference!.tip,
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

const sec = (x: number) => `${(x / 1000).toFixed(2)} s`;

function table(results: LayoutResult[]): string {
  return align([
    [
      'layout',
      'messages',
      'entity-git sync',
      'fast-import',
      '+ checkout',
      'entity-git/fast-import',
      'entity-git/(fast-import+checkout)',
      'same-thread tree',
      'same-thread/entity-git',
      'reconcile',
      'reconcile/entity-git',
      'node reads',
    ],
    [
      '',
      '',
      'median / max',
      'median / max',
      'median',
      '(medians)',
      '(medians)',
      'median',
      '(medians)',
      'median / max',
      '(medians)',
      'a reconcile',
    ],
    ...results.map((r) => [
      r.layout,
      `${int(r.messages)} (${int(r.commits)} commits)`,
      `${sec(r.entityGit.median)} / ${sec(r.entityGit.max)}`,
      `${sec(r.fastImport.median)} / ${sec(r.fastImport.max)}`,
      sec(r.checkout.median),
      ratio(r.ratios.entityGitOverFastImport),
      ratio(r.ratios.entityGitOverFastImportAndCheckout),
      sec(r.sameThread.median),
      ratio(r.ratios.sameThreadOverEntityGit),
      `${sec(r.reconcile.median)} / ${sec(r.reconcile.max)}`,
      ratio(r.ratios.reconcileOverEntityGit),
      String(r.reconcileReads),
    ]),
  ]);
}

function diskTable(results: LayoutResult[]): string {
  return align([
    [
      'layout',
      'message JSON',
      'entity-git objects',
      'fast-import objects',
      'entity-git .git',
      'fast-import .git',
      'objects/JSON (entity-git / fast-import)',
    ],
    ...results.map((r) => [
      r.layout,
      mb(r.messageBytes),
      mb(r.disk.entityGit.objects),
      mb(r.disk.fastImport.objects),
      mb(r.disk.entityGit.gitdir),
      mb(r.disk.fastImport.gitdir),
      `${ratio(r.disk.entityGit.objects / r.messageBytes)} / ${ratio(r.disk.fastImport.objects / r.messageBytes)}`,
    ]),
  ]);
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
