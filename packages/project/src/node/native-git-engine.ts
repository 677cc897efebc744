import { createObjectEngine, type ProjectGitEngine } from '../index.js';
import { nativeGitAvailable } from '@entity-git/node-fs';
import { nativeCommits } from './native-git-commit.js';
import { nativeIndex } from './native-git-index.js';
import { nativeInspect } from './native-git-inspect.js';
import { NATIVE_GIT_ENGINE, gitProcess, type NativeGitEngineOptions } from './native-git-process.js';
import { nativeStatus } from './native-git-status.js';
import { nativeHistory } from './native-git-history.js';
import { nativeUndo } from './native-git-undo.js';
import { nodeCodec, nodeStorage } from '@entity-git/node-fs';

export { NATIVE_GIT_ENGINE, type NativeGitEngineOptions } from './native-git-process.js';

/**
 * Native git behind the project-git seam: `git` spawned with `execFile` (never a shell), the
 * environment cleaned of `GIT_*` variables that would redirect it, optional locks off so reads
 * never rewrite the index. A commit is built in a temporary index (`GIT_INDEX_FILE`) from HEAD plus
 * exactly the agent's paths, made with `commit-tree` (no hook runs, nothing is signed), and lands
 * with `update-ref <branch> <new> <old>`; then `update-index --index-info` sets those paths, and
 * only those, in the real index.
 */
export function nativeGitEngine(options: NativeGitEngineOptions = {}): ProjectGitEngine {
  const opts = Object.freeze({ gitPath: 'git', timeoutMs: 120_000, indexLockTimeoutMs: 10_000, ...options });
  const proc = gitProcess(opts);
  const statusOps = nativeStatus(proc);
  const { status, hashPaths } = statusOps;
  const indexOps = nativeIndex(opts, proc);
  const { updateIndex } = indexOps;
  const { inspect, init } = nativeInspect(proc);
  const { commit, treeEntries } = nativeCommits(proc, indexOps);
  const { history, changedPaths, remoteRefsContaining, reflog } = nativeHistory(proc);
  const { undo } = nativeUndo(proc, indexOps, statusOps);
  return Object.freeze({
    name: NATIVE_GIT_ENGINE,
    inspect,
    status,
    hashPaths,
    init,
    commit,
    treeEntries,
    updateIndex,
    history,
    changedPaths,
    remoteRefsContaining,
    reflog,
    undo,
  });
}

/**
 * The project-git engine for Node: native git when a git ≥ 2.29 is on PATH (trusted on any real
 * repository, and fast on large trees), else core's object engine ({@link createObjectEngine}) over node:fs.
 */
export function defaultProjectGitEngine(options: NativeGitEngineOptions = {}): ProjectGitEngine {
  if (nativeGitAvailable(options.gitPath ?? 'git')) return nativeGitEngine(options);
  return createObjectEngine({ storage: nodeStorage(), codec: nodeCodec });
}
