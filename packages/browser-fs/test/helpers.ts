import { browserStorage, openIdbDag, type BrowserStorage, type IdbDag } from '@entity-git/browser-fs';

let counter = 0;
/** A name no other test (or earlier run in this profile) uses. */
export function unique(prefix: string): string {
  counter++;
  return `${prefix}-${Date.now().toString(36)}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
}

/** A fresh storage on its own LightningFS file system. */
export function freshStorage(options: Parameters<typeof browserStorage>[0] = {}): BrowserStorage {
  return browserStorage({ fsName: unique('fs'), ...options });
}

/** A fresh, empty IndexedDB DAG. */
export function freshDag(): Promise<IdbDag> {
  return openIdbDag({ name: unique('dag') });
}

/** Remove an IndexedDB database without waiting for other connections to close. */
export function dropDatabase(name: string): void {
  indexedDB.deleteDatabase(name);
}

// Fixed by the golden DAG, the default identity and the flat layout: the ids node-fs asserts.
export const GOLDEN_TIPS = {
  main: '2d6739e6531c79338d437bcd12e6a1911db229f3',
  'retry-a4r': 'd080c326d39a5951408d85b37d2ad5734ef66218',
  'fork-u2e': '91b1853f7d112a2d1c527c327cbb1fe5c82401c6',
  'fork-u4': '17a4c695c75333ca3ac7710e31cd26d953bab6d6',
};
export const GOLDEN_TURN1 = '4b1cc3d267e0d1e614cf1f5670401133cff1ac7f';
/** The same DAG in the sharded layout (node-fs asserts the same literals). */
export const SHARDED_TIPS = {
  main: 'd40c1628d1614b314609b730db3c86d7c91a5afe',
  'retry-a4r': '1351fc5cfda3c78894e4fe7b9f24bf039e679c3c',
  'fork-u2e': '713197294cf6b78b2aacc4b901d27a5161f053de',
  'fork-u4': '84641703ebed612c69c87ff666a0e9dc41a3cc03',
};
