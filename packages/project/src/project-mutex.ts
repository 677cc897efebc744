import { KeyedMutex } from '@entity-git/git';
import type { ProjectLock } from './project-coordination.js';

/**
 * One in-process queue per lock key (the shared {@link KeyedMutex}), around the cross-process lock
 * the adapter supplies: callers in this process wait their turn before asking for the file lock.
 */
export function serialized(lock: ProjectLock | undefined): ProjectLock {
  const mutex = new KeyedMutex();
  return <T>(key: string, fn: () => Promise<T>): Promise<T> => mutex.run(key, () => (lock ? lock(key, fn) : fn()));
}
