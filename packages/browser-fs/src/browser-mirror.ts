import { createMirror, type Mirror, type MirrorOptions } from '@entity-git/core';
import { browserStorage, type BrowserStorage, type BrowserStorageOptions } from './browser-storage.js';

/** Where session repositories live in the browser file system unless told otherwise. */
export const DEFAULT_ROOT = '/sessions';

export interface BrowserMirrorOptions extends Omit<MirrorOptions, 'storage' | 'root'>, BrowserStorageOptions {
  /** Absolute directory in the LightningFS file system. Default {@link DEFAULT_ROOT}. */
  root?: string;
  /** A storage made already (shared with other mirrors of the page); else one is made from the options. */
  storage?: BrowserStorage;
}

/** The mirror in a page: core's `createMirror` with {@link browserStorage}. */
export function createBrowserMirror(options: BrowserMirrorOptions): Mirror & { readonly storage: BrowserStorage } {
  const { fsName, syncLock, storage: given, root, ...rest } = options;
  const storage = given ?? browserStorage({ fsName, syncLock });
  const mirror = createMirror({ ...rest, root: root ?? DEFAULT_ROOT, storage });
  return Object.assign(mirror, { storage });
}
