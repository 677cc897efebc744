import type { ProjectGitEngine } from './project-git-engine.js';
import { commits } from './object-engine/commit.js';
import { OBJECT_ENGINE, engineContext, type ObjectEngineOptions } from './object-engine/context.js';
import { discovery } from './object-engine/discovery.js';
import { historyOf } from './object-engine/history.js';
import { indexIo } from './object-engine/index-io.js';
import { statusOf } from './object-engine/status.js';
import { undoing } from './object-engine/undo.js';
import { worktree } from './object-engine/worktree.js';

export { OBJECT_ENGINE, type ObjectEngineOptions } from './object-engine/context.js';

/**
 * The project-git engine over any `StorageFs` — the browser's, and Node's when no git binary
 * exists — built on core's own object layer (`git/objects.ts`, `git/refs.ts`: loose objects and
 * packs, isomorphic-git only for a pack index of a version that layer does not read), reading what
 * git reads and writing the way git writes: loose objects through temp+rename, the branch under
 * `<ref>.lock` with an old-value check and a reflog, the index under `index.lock`. isomorphic-git's own `statusMatrix`/`add`/`commit`
 * are not used: they read index versions 2–3 only, know no linked worktrees, and write the index
 * and refs in place without git's lock files.
 *
 * Limits (each reported as `unsupported` where it matters): no clean/smudge filters (a repository
 * whose attributes name a `filter=` is unsupported) and no `core.autocrlf` conversion (unsupported
 * when set); `.gitattributes` `text`/`eol` conversion is not applied (bytes are committed as they
 * are); ignore rules come from `.gitignore` files and `.git/info/exclude`, not `core.excludesFile`.
 */
export function createObjectEngine(options: ObjectEngineOptions): ProjectGitEngine {
  const ctx = engineContext(options);
  const index = indexIo(ctx);
  const disc = discovery(ctx, index);
  const wt = worktree(ctx, disc);
  const status = statusOf(ctx, index, disc, wt);
  const { commit, treeEntries, updateIndex } = commits(ctx, index, disc, wt);
  const { inspect, init } = disc;
  const { hashPaths } = wt;
  const { history, changedPaths, remoteRefsContaining, reflog } = historyOf(ctx);
  const { undo } = undoing(ctx, index, disc, wt);
  return Object.freeze({
    name: OBJECT_ENGINE,
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

/** @deprecated The engine is built on core's own object layer, not on isomorphic-git: use {@link OBJECT_ENGINE}. */
export const ISO_GIT_ENGINE = OBJECT_ENGINE;
/** @deprecated Use {@link createObjectEngine}. */
export const createIsoGitEngine = createObjectEngine;
/** @deprecated Use {@link ObjectEngineOptions}. */
export type IsoGitEngineOptions = ObjectEngineOptions;
