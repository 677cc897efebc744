import type { ProjectLock } from './project-coordination.js';

// The project auto-commit's own mutex, kept here in one small place until a shared one replaces it.

/** One in-process queue per lock key, around the (cross-process) lock the adapter supplies. */
export function serialized(lock: ProjectLock | undefined): ProjectLock {
  const tails = new Map<string, Promise<unknown>>();
  return async <T>(key: string, fn: () => Promise<T>): Promise<T> => {
    const previous = tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = previous.then(() => mine);
    tails.set(key, tail);
    await previous;
    try {
      return lock ? await lock(key, fn) : await fn();
    } finally {
      release();
      if (tails.get(key) === tail) tails.delete(key);
    }
  };
}
