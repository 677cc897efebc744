import { EntityGitError } from '@entity-git/core';
import { PREFIX } from './errors.js';

// Lock files (`<ref>.lock`) carry their creator's owner tag as their uid. LightningFS's
// default uid is 1, so files made without this storage never look abandoned.
export const MIN_OWNER = 2;
export const MAX_OWNER = 0x7fffffff;

export const lockName = (fsName: string, what: string) => `entity-git:${fsName}:${what}`;

export function ownerTag(): number {
  const [n] = crypto.getRandomValues(new Uint32Array(1));
  return MIN_OWNER + (n! % (MAX_OWNER - MIN_OWNER));
}

export function locks(): LockManager {
  const manager = globalThis.navigator?.locks;
  if (!manager)
    throw new EntityGitError(
      'INVALID_OPTION',
      `${PREFIX} the Web Locks API (navigator.locks) is missing: a secure context (https or localhost) is needed`,
    );
  return manager;
}
