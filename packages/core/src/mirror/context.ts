import type { DagSource } from '../dag/dag-source.js';
import { assertIdentity, type Identity } from '@entity-git/git';
import { defaultMetadataKeys, type MetadataKeys } from '../model/commit-message.js';
import { DEFAULT_IDENTITY } from '../model/identity.js';
import { redactingDag } from '../redact/redacting-dag.js';
import { checkRedaction, type RedactionOptions } from '../redact/redaction-options.js';
import type { MirrorOptions } from './mirror.js';
import { createRepoContext, type OnDemandModule, type RepoContext } from './repo/context.js';
import type { SyncRecords } from './sync/synced.js';

/** A mirror's options, checked and with their defaults, and its caches: what every phase reads. */
export interface MirrorContext extends RepoContext {
  readonly dag: DagSource;
  readonly identity: Identity;
  readonly keys: MetadataKeys;
  readonly batchSize: number;
  readonly packTurns: boolean;
  /** What the mirror redacts (docs/design.md, 'Redaction'), checked; null: nothing. `dag` then reads through it. */
  readonly redaction: Readonly<Required<RedactionOptions>> | null;
  /** What each sync left, by the result it returned (see sync/synced.ts). */
  readonly synced: SyncRecords;
}

/**
 * Check `o` and fill in its defaults (`INVALID_OPTION` for a bad root, lock, layout or yield
 * interval); `onDemand` loads on-demand.ts (the caller's: this module does not import it).
 */
export function createContext(o: MirrorOptions, onDemand: () => Promise<OnDemandModule>): MirrorContext {
  const repo = createRepoContext(
    {
      storage: o.storage,
      root: o.root,
      lock: o.lock,
      ...(o.layout === undefined ? {} : { layout: o.layout }),
      ...(o.yieldEveryMs === undefined ? {} : { yieldEveryMs: o.yieldEveryMs }),
    },
    onDemand,
  );
  const identity = Object.freeze({ ...(o.identity ?? DEFAULT_IDENTITY) });
  assertIdentity(identity);
  const keys = { ...defaultMetadataKeys, ...o.metadataKeys };
  const batchSize = o.batchSize ?? 500;
  const packTurns = o.packTurns ?? false;
  const redaction = o.redaction === false ? null : checkRedaction(o.redaction ?? {});
  const dag = redaction === null ? o.dag : redactingDag(o.dag, redaction);
  return { ...repo, dag, identity, keys, batchSize, packTurns, redaction, synced: new WeakMap() };
}
