import { createMirror, type Mirror, type MirrorOptions } from '@entity-git/core';
import { resolve } from 'node:path';
import { defaultRoot, nodeStorage, type NodeStorageOptions } from './node-storage.js';

export interface NodeMirrorOptions extends Omit<MirrorOptions, 'storage' | 'root'>, NodeStorageOptions {
  /** Default `~/.openprogram/sessions`; a relative path is taken from the current directory. */
  root?: string;
}

/**
 * The mirror on Node's file system: `createMirror` with {@link nodeStorage}, each turn's objects
 * written as a pack of their own (`packTurns`, unless set to false) — give the mirror service a
 * packer (`createNodePacker`) to merge them in the background.
 */
export function createNodeMirror(options: NodeMirrorOptions): Mirror {
  const { fsync, syncLock, root, ...rest } = options;
  const storageOptions: NodeStorageOptions = { fsync, syncLock };
  return createMirror({
    ...rest,
    packTurns: rest.packTurns ?? true,
    root: resolve(root ?? defaultRoot()),
    storage: nodeStorage(storageOptions),
  });
}
