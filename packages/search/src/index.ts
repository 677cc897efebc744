export { SearchIndex, THREAD_WARNING } from './search-index.js';
export type { SearchIndexOptions, IndexUpdate, SyncDone } from './search-types.js';
export type { IndexContents } from './index-contents.js';
export { INDEX_FILE } from './index-schema.js';
export type { FlushCount, OnIndexError } from './update-queue.js';
