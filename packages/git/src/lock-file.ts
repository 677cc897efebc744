import { EntityGitError } from './errors.js';
import type { Store } from './storage/store.js';

/** How a lock is waited for, and when a lock nobody lets go of is taken over. */
export interface LockOptions {
  /** How long to wait for a lock someone else holds before giving up (`0`: do not wait). */
  timeoutMs: number;
  /**
   * A lock untouched this long was left by a killed holder and is taken over (`Infinity`: never,
   * for locks a person's own git may hold as long as it likes).
   */
  staleMs: number;
}

/**
 * The defaults of every lock entity-git takes, in one place. The storages' sync lock, the refs'
 * and index's `<file>.lock`, and the packer's lock are each one {@link LockOptions}; a caller's
 * options (`lockOptions`) replace these field by field.
 */
export const LOCK_DEFAULTS = Object.freeze({
  /**
   * `<ref>.lock` and `index.lock`: git holds them for milliseconds, so five seconds of waiting is
   * a writer that is stuck, and one untouched for 30 s was left by a killed one.
   */
  ref: Object.freeze({ timeoutMs: 5000, staleMs: 30_000 }),
  /**
   * The sync lock of a session repository, held for a whole sync (a backfill of a long session
   * takes seconds), so it is waited for longer; where it is a file its holder refreshes it every
   * `staleMs / 3`, so one older than `staleMs` has no living holder.
   */
  sync: Object.freeze({ timeoutMs: 60_000, staleMs: 30_000 }),
  /**
   * The packer's lock: never waited for (another packer is at work: this one passes and a later
   * request packs), and a packer killed in the middle of a large repository's pack leaves it for
   * ten minutes, longer than any pack takes.
   */
  pack: Object.freeze({ timeoutMs: 0, staleMs: 10 * 60_000 }),
} satisfies Record<string, LockOptions>);

/**
 * `defaults` with the fields `given` sets replaced: `INVALID_OPTION` for a time that is not a
 * number of milliseconds ≥ 0 (`Infinity`: wait for good, or never take over). `what` names the
 * option in the message.
 */
export function lockOptions(defaults: LockOptions, given: Partial<LockOptions> = {}, what = 'lock'): LockOptions {
  const out = { timeoutMs: given.timeoutMs ?? defaults.timeoutMs, staleMs: given.staleMs ?? defaults.staleMs };
  for (const key of ['timeoutMs', 'staleMs'] as const) {
    const v = out[key];
    if (typeof v !== 'number' || Number.isNaN(v) || v < 0)
      throw new EntityGitError('INVALID_OPTION', `${what}.${key} must be a number of milliseconds >= 0: ${String(v)}`);
  }
  return Object.freeze(out);
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * One attempt at a git-style lock file (`<file>.lock`, created exclusively, holding `content`):
 * true when taken. One untouched for `staleMs` was left by a killed writer: it is removed (what
 * it guarded was never renamed over, so nothing is lost) and the lock taken in its place.
 */
export async function tryLockFile(
  store: Store,
  lockPath: string,
  content: Uint8Array | string,
  staleMs: number,
): Promise<boolean> {
  if (await store.createExclusive(lockPath, content)) return true;
  const st = await store.lstat(lockPath);
  if (st === null || Date.now() - st.mtimeMs <= staleMs) return false;
  await store.remove(lockPath);
  return store.createExclusive(lockPath, content);
}

/**
 * Take a lock file ({@link tryLockFile}), waiting up to `timeoutMs` for another holder to let go;
 * `REF_LOCKED` after that.
 */
export async function acquireLockFile(
  store: Store,
  lockPath: string,
  content: Uint8Array | string,
  options: LockOptions,
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  for (let wait = 2; ; wait = Math.min(wait * 2, 100)) {
    if (await tryLockFile(store, lockPath, content, options.staleMs)) return;
    if (Date.now() > deadline) {
      throw new EntityGitError('REF_LOCKED', `${lockPath} is held by another writer`, { lock: lockPath });
    }
    await sleep(wait);
  }
}
