// What a mirror loads on first use: the working tree's checkout (a storage without a working tree,
// the browser's, never needs it), verify, the repair's scrub of a damaged repository, the
// working-tree checks of a repair or a lost index, a page of a log (the replay server's), and
// what only a backfill does: write the
// commit-graph, and (on a storage with a working tree) the files beside the pack.
// One module, reached through the context (`RepoContext.onDemand`, set by load-on-demand.ts): a
// page that syncs and replays never loads it, and a bundler makes one chunk of it, outside a
// browser bundle's first load (its budget: scripts/consumer-check.mjs).
export { checkout, checkOutTree } from './worktree-checkout.js';
export { verify } from './verify/verify.js';
export { scrubRepository } from './repo/scrub.js';
export { mirrorFiles, worktreeDamage, worktreeDamaged } from './worktree-check.js';
export { checkLogPage, logSlice, pagedLog } from './log-page.js';
export { writeCommitGraph } from '@entity-git/git';
export { prewrite } from './sync/prewrite.js';
