import { isEntityGitError } from '@entity-git/git';
import type { BranchPlan } from '../../model/derive.js';
import type { MirrorContext } from '../context.js';
import { HostYield, yieldToHost } from '../host-yield.js';
import { moveMetaRef, planMetaRef } from '../meta-ref.js';
import type { Known, StateDelta } from '../repo/state.js';
import type { ExtendedBranch } from '../mirror.js';
import type { Built } from './build.js';
import { extendedBranch } from './extended.js';

/** The fourth phase's value: the objects on disk, and where the refs went. */
export interface Written extends Built {
  /** Each branch's tip commit and its turn number. */
  tips: Map<string, { oid: string; turn: number }>;
  /** The branch HEAD named before (null: none, or HEAD is damaged). */
  headBefore: string | null;
  /** Branches whose ref moved or was created. */
  branchesMoved: string[];
  /** The moved branches carried forward from their tip, with the messages they gained. */
  extendedBranches: ExtendedBranch[];
  headMoved: boolean;
  /** The meta ref moved (or was written again). */
  metaMoved: boolean;
  /** Objects and bytes the sync's packs took (its loose objects are counted by the object store). */
  inPacks: { objects: number; bytes: number };
  /** Objects a derivation from scratch put into its sink (0 otherwise). */
  packed: number;
}

/**
 * Write what the build made: the sink finished (a pack, or the loose objects still queued), the
 * nodes its commits hold marked stored, then each branch's ref, HEAD and the meta ref moved.
 */
export async function write(ctx: MirrorContext, built: Built): Promise<Written> {
  const { repo, derivation, builds, sink, stored, delta, session, full } = built;
  const host = new HostYield(ctx.yieldEveryMs);
  const inPacks = { objects: 0, bytes: 0 };
  let packed = 0;
  // The meta ref's commit, tree and blob go into the sync's pack with its turns (a loose object
  // would cost an `objects/xx` directory each); without a sink, they are written loose below.
  const meta = await planMetaRef(repo, { session, identity: ctx.identity, checkObjects: full });
  if (sink !== null && meta !== null) {
    await sink.write('blob', meta.meta.blob);
    await sink.write('tree', meta.meta.tree);
    await sink.write('commit', meta.meta.commit);
  }
  await host.due();
  if (sink !== null) {
    await sink.finish();
    inPacks.objects += sink.packed.objects;
    inPacks.bytes += sink.packed.bytes;
    if (built.work.kind === 'derive') packed = sink.count;
  }
  if (stored !== null) await markStored(stored.branches, stored.from, delta, host);
  const tips = new Map<string, { oid: string; turn: number }>();
  for (const b of derivation.branches) {
    const oid = builds.get(b.name)?.commits.at(-1);
    if (oid !== undefined) tips.set(b.name, { oid, turn: b.complete });
  }

  await host.due();
  const headBefore = await repo.refs.headBranch().catch((err: unknown) => {
    if (isEntityGitError(err, 'REF_CORRUPT')) return null;
    throw err;
  });
  const branchesMoved: string[] = [];
  const extendedBranches: ExtendedBranch[] = [];
  for (const [name, { oid, turn }] of tips) {
    const ref = `refs/heads/${name}`;
    let current: string | null | undefined;
    try {
      const raw = await repo.refs.readRaw(ref);
      current = raw !== null && 'oid' in raw ? raw.oid : null;
    } catch (err) {
      if (!isEntityGitError(err, 'REF_CORRUPT')) throw err;
      current = undefined;
    }
    if (current === oid) continue;
    await host.due();
    await repo.refs.update(ref, oid, {
      old: current,
      reflog: {
        who: ctx.identity,
        message: current === null ? `branch: created at turn ${turn}` : `entity-git: turn ${turn}`,
        alsoHead: headBefore === name,
      },
    });
    branchesMoved.push(name);
    const plan = typeof current === 'string' ? derivation.branches.find((b) => b.name === name) : undefined;
    const extended = plan && extendedBranch(plan, builds.get(name)!.commits, current!, built.fresh);
    if (extended) extendedBranches.push(extended);
  }
  let headMoved = false;
  await host.due();
  if (derivation.head !== null && headBefore !== derivation.head) {
    await repo.refs.setHead(
      derivation.head,
      ctx.identity,
      {
        branch: headBefore,
        oid: headBefore ? await repo.refs.resolve(`refs/heads/${headBefore}`).catch(() => null) : null,
      },
      tips.get(derivation.head)?.oid ?? null,
    );
    headMoved = true;
  }
  await host.due();
  if (meta !== null) await moveMetaRef(repo, meta, { identity: ctx.identity, written: sink !== null });
  const metaMoved = meta !== null;
  return { ...built, tips, headBefore, branchesMoved, extendedBranches, headMoved, metaMoved, inPacks, packed };
}

/** Mark the nodes of complete turns (from turn index `from` on) as held by a commit. */
async function markStored(
  branches: readonly BranchPlan<Known>[],
  from: number,
  delta: StateDelta,
  host: HostYield,
): Promise<void> {
  for (const b of branches) {
    for (let k = from; k < b.complete; k++) {
      if (host.owed()) await yieldToHost();
      for (const n of b.turns[k]!.nodes) {
        if (!n.stored) {
          n.stored = true;
          delta.nodes.add(n.id);
        }
      }
    }
  }
}
