import type { DagSource } from '../dag/dag-source.js';
import { EntityGitError, assertIdentity, type Identity, type Store, storeFor } from '@entity-git/git';
import { defaultMetadataKeys, type MetadataKeys } from '../model/commit-message.js';
import { DEFAULT_IDENTITY } from '../model/identity.js';
import { DEFAULT_YIELD_EVERY_MS } from './host-yield.js';
import { LAYOUTS } from './layout.js';
import type { Layout, MirrorOptions } from './mirror.js';
import { RepoCache } from './repo-cache.js';

/** A mirror's options, checked and with their defaults, and its caches: what every phase reads. */
export interface MirrorContext {
  readonly dag: DagSource;
  readonly store: Store;
  /** The root directory, without a trailing slash. */
  readonly root: string;
  readonly identity: Identity;
  readonly keys: MetadataKeys;
  readonly lock: { timeoutMs: number; staleMs: number };
  readonly batchSize: number;
  /** The layout of new repositories. */
  readonly layout: Layout;
  readonly packTurns: boolean;
  readonly yieldEveryMs: number;
  readonly cache: RepoCache;
  /**
   * What the mirror loads on first use: on-demand.ts, loaded by the facade (session-mirror.ts).
   * Typed here as nothing in particular, so that this module, which everything imports, imports
   * none of them: each caller reads it as the one module whose names it takes (they are re-exported
   * unchanged), e.g. `(await ctx.onDemand()) as typeof import('./repo-scrub.js')`.
   */
  readonly onDemand: () => Promise<unknown>;
}

/**
 * Check `o` and fill in its defaults (`INVALID_OPTION` for a bad root, layout or yield interval);
 * `onDemand` loads on-demand.ts (the caller's: this module does not import it).
 */
export function createContext(o: MirrorOptions, onDemand: () => Promise<unknown>): MirrorContext {
  if (typeof o.root !== 'string' || !o.root.startsWith('/')) {
    throw new EntityGitError('INVALID_OPTION', `root must be an absolute path: ${JSON.stringify(o.root)}`);
  }
  const dag = o.dag;
  const store = storeFor(o.storage);
  const root = o.root.replace(/\/+$/, '') || '/';
  const identity = Object.freeze({ ...(o.identity ?? DEFAULT_IDENTITY) });
  assertIdentity(identity);
  const keys = { ...defaultMetadataKeys, ...o.metadataKeys };
  const lock = { timeoutMs: o.lockTimeoutMs ?? 5000, staleMs: o.staleLockMs ?? 30_000 };
  const batchSize = o.batchSize ?? 500;
  const layout = o.layout ?? 'flat';
  if (!LAYOUTS.includes(layout))
    throw new EntityGitError(
      'INVALID_OPTION',
      `layout must be one of ${LAYOUTS.join(', ')}: ${JSON.stringify(o.layout)}`,
    );
  const cache = new RepoCache(store);
  const packTurns = o.packTurns ?? false;
  const yieldEveryMs = o.yieldEveryMs ?? DEFAULT_YIELD_EVERY_MS;
  if (!(yieldEveryMs >= 0))
    throw new EntityGitError('INVALID_OPTION', `yieldEveryMs must be a number >= 0: ${JSON.stringify(o.yieldEveryMs)}`);
  return { dag, store, root, identity, keys, lock, batchSize, layout, packTurns, yieldEveryMs, cache, onDemand };
}
