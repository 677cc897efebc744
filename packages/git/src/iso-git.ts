import type * as IsoGitModule from 'isomorphic-git';

/**
 * isomorphic-git, loaded on first use: only push, fetch and the reader of packs with an index
 * other than version 2 need it, so a browser bundle that only mirrors and replays leaves it (and
 * its own pako, sha.js and friends; README "Bundle size" has the figure) in a chunk
 * of its own that is fetched when a remote is first used.
 */
type IsoGit = typeof IsoGitModule;

let loading: Promise<IsoGit> | null = null;

/** isomorphic-git's module, with Node's `Buffer` installed first where the platform has none. */
export function loadIsoGit(): Promise<IsoGit> {
  loading ??= (async () => {
    await ensureBuffer();
    return import('isomorphic-git');
  })().catch((err: unknown) => {
    loading = null;
    throw err;
  });
  return loading;
}

/**
 * isomorphic-git calls Node's `Buffer` at run time; browsers have none. The `buffer` package
 * (Node's API) is installed as `globalThis.Buffer` only then, so a page that never talks to a
 * remote never loads it. Node has its own and never imports this one.
 */
async function ensureBuffer(): Promise<void> {
  const g = globalThis as { Buffer?: unknown };
  if (g.Buffer !== undefined) return;
  const { Buffer } = await import('buffer');
  g.Buffer ??= Buffer;
}
