import LightningFSModule from '@isomorphic-git/lightning-fs';

/** What LightningFS's `stat`/`lstat` give (a Node-like Stats). */
export interface LightningStat {
  type: 'file' | 'dir' | 'symlink';
  mode: number;
  size: number;
  ino: number;
  mtimeMs: number;
  ctimeMs: number;
  uid: number;
  gid: number;
  dev: number;
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}

/**
 * The slice of LightningFS's `promises` API this package uses (STYLE.md §3: type only what is
 * used). The same object can be handed to isomorphic-git as `{ promises }`.
 */
export interface LightningPromises {
  init(name: string, options?: LightningOptions): Promise<void>;
  readFile(path: string, options?: { encoding?: 'utf8' } | 'utf8'): Promise<Uint8Array | string | undefined>;
  writeFile(path: string, data: Uint8Array | string, options?: { mode?: number } | 'utf8'): Promise<void>;
  unlink(path: string): Promise<void>;
  readdir(path: string): Promise<string[]>;
  mkdir(path: string, options?: { mode?: number }): Promise<void>;
  rmdir(path: string): Promise<void>;
  stat(path: string): Promise<LightningStat>;
  lstat(path: string): Promise<LightningStat>;
  rename(from: string, to: string): Promise<void>;
  readlink(path: string): Promise<string>;
  symlink(target: string, path: string): Promise<void>;
  /** Save the directory tree (the "superblock") to IndexedDB now. */
  flush(): Promise<void>;
}

export interface LightningOptions {
  wipe?: boolean;
  defer?: boolean;
  uid?: number;
  gid?: number;
  /** The IndexedDB database of file data and the tree. LightningFS's default: the fs name. */
  fileDbName?: string;
}

export interface LightningFS {
  promises: LightningPromises;
}

/** A new LightningFS instance, not yet initialised. */
export function newLightningFS(): LightningFS {
  const FS = LightningFSModule as unknown as new () => LightningFS;
  return new FS();
}
