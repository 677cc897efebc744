// One size of the commit bench: a session backfilled to that many messages, then turns committed
// interleaved by entity-git's mirror (packed and loose), the git CLI and the floor; the three checked
// to end at the same tree, then the repository's size on disk, loose and packed both ways.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
// Relative imports: bench/ is not a workspace package, so the root has no @entity-git/* links.
// The path is the one node-fs's own `@entity-git/core` link resolves to, so there is one MemoryDag.
import { MemoryDag, packSession, type DagNode, type Layout } from '../../packages/core/src/index.js';
import { Store } from '../../packages/git/src/index.js';
import { createNodeMirror, nativeRepack, nodeStorage } from '../../packages/node-fs/src/index.js';
import { filesOf, Floor, type FileOut } from './commit-floor.js';
import { BASE_TIME, Conversation, TURN_FILES } from './conversation.js';
import { bytesUnder, git, stats, type Stats, failWith, fsckOr } from './measure.js';

export const WARMUP_TURNS = 3;
export const TIMED_TURNS = 30;

export const fail: (message: string) => never = failWith('commit');
/** `git fsck --strict`; warnings (stderr, exit 0) count as failures too. */
const fsck = (dir: string) => fsckOr(fail, dir);

export interface DiskResult {
  /** Canonical JSON of every message: the bytes the repository exists to keep. */
  messageBytes: number;
  loose: number;
  packedJs: number;
  packedNative: number;
  packJsMs: number;
  packNativeMs: number;
}

export interface SizeResult {
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

export async function measure(dir: string, messages: number, layout: Layout): Promise<SizeResult> {
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
  await packSession(new Store(nodeStorage()), join(copyJs, '.git'));
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
