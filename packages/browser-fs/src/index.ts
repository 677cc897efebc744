export {
  browserStorage,
  fsDatabaseName,
  DRIVER_NAME,
  DEFAULT_FS_NAME,
  type BrowserStorage,
  type BrowserStorageOptions,
} from './browser-storage.js';
export { requestPersistentStorage, type PersistenceReport } from './persistent-storage.js';
export { createBrowserMirror, DEFAULT_ROOT, type BrowserMirrorOptions } from './browser-mirror.js';
export {
  IdbDag,
  openIdbDag,
  deleteIdbDag,
  DEFAULT_DAG_NAME,
  DEFAULT_BATCH_SIZE,
  MAX_BATCH_SIZE,
  type IdbDagOptions,
  type AppendNodeInput,
} from './idb-dag.js';
export {
  importSession,
  importRows,
  type ImportSessionOptions,
  type ImportRowsOptions,
  type ImportResult,
} from './import-session.js';
export { isQuotaError } from '@entity-git/git';
export type { LightningFS, LightningPromises, LightningStat } from './lightning-fs.js';
