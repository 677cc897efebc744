/**
 * A session repository's index of at least this many entries is written as git's split index:
 * the entries of a shared index stay in that file, and the index holds only those added since, so
 * a turn writes a few entries, not the whole session (see `writeIndex`, worktree-checkout.ts).
 */
export const SPLIT_MIN = 256;
