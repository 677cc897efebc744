/** The adapter's name constant. The storage itself (LightningFS, Web Locks, IndexedDB DAG) is the work of the browser-fs issue. */
export const DRIVER_NAME = 'browser-fs';
