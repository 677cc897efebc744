export * from './golden-dag.js';
export * from './storage-suite.js';
export * from './dag-source-suite.js';
export * from './project-store-suite.js';
export * from './hostile-ids.js';
export * from './faulty-storage.js';
export * from './database-shapes.js';
export * from './mirror-suite.js';
