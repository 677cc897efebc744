import type { ObjectStore } from '@entity-git/git';
import type { Derivation } from '../../model/derive.js';
import { newBuild } from '../branch-build.js';
import type { MirrorContext } from '../context.js';
import type { Layout } from '../mirror.js';
import type { Known } from '../repo/state.js';
import type { SessionId } from '../session-id.js';
import { commitBranches } from '../sync/build.js';
import type { ObjectSink } from '../sync/sinks.js';

/** A derived DAG, and what its commits are built with besides. */
export interface FreshBuild {
  sessionId: SessionId;
  layout: Layout;
  /** meta.json's content. */
  metaBytes: Uint8Array;
  derivation: Derivation<Known>;
}

/**
 * Each branch's tip as a fresh backfill of the derived DAG writes it, by this mirror's config:
 * the same commit building as a sync's, from nothing (no memo, no commit kept from a repository),
 * into a sink that only hashes — nothing is read from the DAG and nothing is stored.
 */
export async function freshTips(ctx: MirrorContext, objects: ObjectStore, b: FreshBuild): Promise<Map<string, string>> {
  const builds = new Map(b.derivation.branches.map((branch) => [branch.name, newBuild()]));
  await commitBranches(ctx, {
    sessionId: b.sessionId,
    layout: b.layout,
    work: b.derivation.branches.map((branch) => [branch, builds.get(branch.name)!]),
    memo: new Map(),
    metaBytes: b.metaBytes,
    fresh: new Map(),
    added: [],
    sink: hashingSink(objects),
  });
  const tips = new Map<string, string>();
  for (const [name, build] of builds) {
    const tip = build.commits.at(-1);
    if (tip !== undefined) tips.set(name, tip);
  }
  return tips;
}

/** A sink that names each object by its id and keeps nothing. */
function hashingSink(objects: ObjectStore): ObjectSink {
  return {
    write: async (type, content) => objects.hash(type, content),
    writeRaw: async () => undefined,
    count: 0,
    packed: { objects: 0, bytes: 0 },
    finish: async () => undefined,
  };
}
