// What a mirror loads on first use: verify, the repair's scrub of a damaged repository, the
// working tree and index a sync writes (on a storage that has a working tree) and their checks
// of a repair or a lost index, a page of a log (the replay server's), and what recognises and
// keeps a repository of format 1.
// One module, reached through the context (`MirrorContext.onDemand`, set by session-mirror.ts): a
// page that syncs and replays never loads it, and a bundler makes one chunk of it, outside a
// browser bundle's first load (its budget: scripts/consumer-check.mjs).
export { verify } from './verify.js';
export { scrubRepository } from './repo-scrub.js';
export { mirrorFiles, worktreeDamage, worktreeDamaged } from './worktree-check.js';
export { checkout } from './worktree-checkout.js';
export { checkLogPage, logSlice, pagedLog } from './log-page.js';
export { backUpFormat1, formatFromTrees } from './format-1.js';
