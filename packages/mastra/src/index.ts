export { MastraDag, DEFAULT_BATCH_SIZE, MAX_BATCH_SIZE, type MastraDagOptions } from './mastra-dag.js';
export { openMastraSqlite, DEFAULT_BUSY_TIMEOUT_MS, type OpenMastraSqliteOptions } from './open-sqlite.js';
export { openMastraPostgres, type OpenMastraPostgresOptions } from './open-postgres.js';
export { MASTRA_SQLITE_NAME, MASTRA_POSTGRES_NAME, type MastraStore } from './mastra-store.js';
export { MASTRA_AGENT } from './stored-rows.js';
export { THREADS_TABLE, MESSAGES_TABLE, mastraTables, type MastraTables } from './mastra-tables.js';
