export { SearchIndex, type SearchIndexOptions, type IndexUpdate } from './search-index.js';
export { INDEX_FILE } from './index-schema.js';
