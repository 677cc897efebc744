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
  main: '9a7f4a180ae6d1b1e2260d527ed1c75b2947f99a',
  'retry-a4r': 'de0817b81e932a4d392ac0896ba36429b1074a58',
  'fork-u2e': 'b2dca18d5f402c26feb464e0d55f787e1d02a336',
  'fork-u4': '899927d124c8ca17e4c1d49a2105c3a1685bfdb0',
};
export const GOLDEN_TURN1 = '3d74359a58dd9fea39d137f57a923afed4ccf7bd';
/** The same DAG in the sharded layout (node-fs asserts the same literals). */
export const SHARDED_TIPS = {
  main: 'b697b93f88e81f3a8938432835ab01bfbbe93119',
  'retry-a4r': '36c1c60d1a84fb2ba1a31107269d9a6a8ffc7385',
  'fork-u2e': '9f2e2706dca9f203bc78703644bc05d3bce8807a',
  'fork-u4': '530fd08ebe15c09fcbcf0b0fff332dd4f2b6eb61',
};
