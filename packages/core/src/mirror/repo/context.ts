import { EntityGitError, LOCK_DEFAULTS, type LockOptions, lockOptions, type Store, storeFor } from '@entity-git/git';
import { DEFAULT_YIELD_EVERY_MS } from '../host-yield.js';
import { LAYOUTS } from '../layout.js';
import type { Layout, MirrorOptions } from '../mirror.js';
import type * as OnDemand from '../on-demand.js';
import { RepoCache } from './cache.js';

/**
 * What the repository layer (open, create, check out, under which locks) works with: the mirror's
 * context is one, and so is the context push, fetch and restore open repositories with, so that
 * both make and read a session repository the same way.
 */
export interface RepoContext {
  readonly store: Store;
  /** The root directory, without a trailing slash. */
  readonly root: string;
  /** The ref and index locks (`LOCK_DEFAULTS.ref` and the caller's options). */
  readonly lock: LockOptions;
  /** The layout of new repositories. */
  readonly layout: Layout;
  readonly yieldEveryMs: number;
  readonly cache: RepoCache;
  /**
   * What the mirror loads on first use: on-demand.ts, loaded by the facades (session-mirror.ts,
   * repository.ts). Its type is imported as a type only: no runtime edge, so the module stays
   * one chunk of its own, outside a browser bundle's first load.
   */
  readonly onDemand: () => Promise<OnDemandModule>;
}

/** The module {@link RepoContext.onDemand} loads (on-demand.ts). */
export type OnDemandModule = typeof OnDemand;

/** What a {@link RepoContext} is made from: the mirror's options that say where and how repositories are kept. */
export type RepoContextOptions = Pick<MirrorOptions, 'storage' | 'root' | 'lock' | 'layout' | 'yieldEveryMs'>;

/** The root as every repository path is made from it: absolute (`INVALID_OPTION` otherwise), no trailing slash. */
export function checkRoot(root: unknown): string {
  if (typeof root !== 'string' || !root.startsWith('/')) {
    throw new EntityGitError('INVALID_OPTION', `root must be an absolute path: ${JSON.stringify(root)}`);
  }
  return root.replace(/\/+$/, '') || '/';
}

/**
 * Check `o` once and fill in its defaults (`INVALID_OPTION` for a bad root, lock, layout or yield
 * interval); `onDemand` loads on-demand.ts (the caller's: this module does not import it).
 */
export function createRepoContext(o: RepoContextOptions, onDemand: () => Promise<OnDemandModule>): RepoContext {
  const root = checkRoot(o.root);
  const store = storeFor(o.storage);
  const lock = lockOptions(LOCK_DEFAULTS.ref, o.lock, 'lock');
  const layout = o.layout ?? 'flat';
  if (!LAYOUTS.includes(layout))
    throw new EntityGitError(
      'INVALID_OPTION',
      `layout must be one of ${LAYOUTS.join(', ')}: ${JSON.stringify(o.layout)}`,
    );
  const yieldEveryMs = o.yieldEveryMs ?? DEFAULT_YIELD_EVERY_MS;
  if (!(yieldEveryMs >= 0))
    throw new EntityGitError('INVALID_OPTION', `yieldEveryMs must be a number >= 0: ${JSON.stringify(o.yieldEveryMs)}`);
  return { store, root, lock, layout, yieldEveryMs, cache: new RepoCache(store), onDemand };
}
