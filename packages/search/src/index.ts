export { SearchIndex, type SearchIndexOptions, type IndexUpdate, type SyncDone } from './search-index.js';
export { INDEX_FILE } from './index-schema.js';
