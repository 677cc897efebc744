import { Buffer } from 'buffer';

/**
 * isomorphic-git (which core uses to read packed objects) calls Node's `Buffer` at run time;
 * browsers have none. Installed when a storage is made, not on import, so importing the
 * package has no side effect.
 */
export function ensureBuffer(): void {
  const g = globalThis as { Buffer?: unknown };
  if (g.Buffer === undefined) g.Buffer = Buffer;
}
