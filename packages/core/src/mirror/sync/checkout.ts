import type { MirrorContext } from '../context.js';
import type { Written } from './write.js';

/** Indexes of at least this many entries are split (git's split index; worktree-checkout.ts writes them). */
export const SPLIT_MIN = 256;

/** The fifth phase's value: the working tree and index as HEAD's tip has them. */
export interface CheckedOut extends Written {
  /** A working-tree file or the index changed. */
  worktreeChanged: boolean;
}

/**
 * On a storage with a working tree, check HEAD's branch out (working tree and index). The code
 * that writes them (worktree-checkout.ts) is loaded on first use, so a storage without a working
 * tree (the browser's) never loads it.
 */
export async function checkOutHead(ctx: MirrorContext, w: Written): Promise<CheckedOut> {
  const { repo, layout, derivation, tips, appended, headMoved, headBefore, branchesMoved } = w;
  const { created, metaBytes, fresh, full, prewritten } = w;
  let worktreeChanged = false;
  if (ctx.store.workTree) {
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
    const { checkout } = (await ctx.onDemand()) as typeof import('../on-demand.js');
    worktreeChanged = await checkout(ctx, repo, {
      layout,
      tip: headTip?.oid ?? null,
      derivation,
      fresh,
      appended: full ? null : hint,
      metaOid,
      prewritten: prewritten === null ? null : await prewritten,
      checkFiles: full,
    });
  }
  return { ...w, worktreeChanged };
}
