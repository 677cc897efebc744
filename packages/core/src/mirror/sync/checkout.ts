import type { MirrorContext } from '../context.js';
import type { RepoContext } from '../repo/context.js';
import type { Repo } from '../repo/repo.js';
import type { Written } from './write.js';

/** The fifth phase's value: the working tree and index as HEAD's tip has them. */
export interface CheckedOut extends Written {
  /** A working-tree file or the index changed. */
  worktreeChanged: boolean;
}

/**
 * On a storage with a working tree, check HEAD's branch out (working tree and index). The checkout
 * (worktree-checkout.ts) is loaded on first use: a storage without a working tree (the browser's)
 * never loads it, and its index codec with it.
 */
export async function checkOutHead(ctx: MirrorContext, w: Written): Promise<CheckedOut> {
  const { repo, layout, derivation, tips, appended, headMoved, headBefore, branchesMoved } = w;
  const { created, metaBytes, fresh, full, prewritten } = w;
  if (!ctx.store.workTree) return { ...w, worktreeChanged: false };
  const headTip = derivation.head === null ? undefined : tips.get(derivation.head);
  // Only the head branch's new turns to add, HEAD where it was: the index needs only those.
  const hint =
    appended !== null &&
    !headMoved &&
    headBefore === derivation.head &&
    (appended.length === 0 || branchesMoved.includes(derivation.head ?? ''))
      ? appended
      : null;
  const metaOid = headTip && created.has(headTip.oid) ? repo.objects.hash('blob', metaBytes) : null;
  const worktreeChanged = await (await ctx.onDemand()).checkout(ctx, repo, {
    layout,
    tip: headTip?.oid ?? null,
    derivation,
    fresh,
    appended: full ? null : hint,
    metaOid,
    metaBytes,
    prewritten: prewritten === null ? null : await prewritten,
    checkFiles: full,
  });
  return { ...w, worktreeChanged };
}

/**
 * The one checkout of a session repository outside a sync (a fetch, a restore): the working tree
 * and index made equal to HEAD's tree, exactly as a sync's checkout leaves them (see
 * `checkOutTree` in worktree-checkout.ts). Runs under the sync lock, on a storage with a working
 * tree; true when anything changed.
 */
export async function checkOutTree(ctx: RepoContext, repo: Repo): Promise<boolean> {
  return (await ctx.onDemand()).checkOutTree(ctx, repo);
}
