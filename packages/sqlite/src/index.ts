export { openSqlite, SQLITE_STORE_NAME, DEFAULT_BUSY_TIMEOUT_MS, type OpenSqliteOptions } from './open-sqlite.js';
export { openPostgres, POSTGRES_STORE_NAME, type OpenPostgresOptions } from './open-postgres.js';
export {
  createSqlStore,
  SQL_STORE_NAME,
  type SqlStore,
  type SqlStoreCommonOptions,
  type CreateSqlStoreOptions,
} from './sql-store.js';
export { registerRowsChecksum, ROWS_CHECKSUM_FUNCTION, type AggregateHost } from './markers/rows-checksum.js';
export { SqlDagSource, DEFAULT_BATCH_SIZE, MAX_BATCH_SIZE, type SqlDagSourceOptions } from './sql-dag-source.js';
export { SqlDagWriter, type SqlDagWriterOptions, type AppendNodeInput } from './sql-dag-writer.js';
export { SqlProjectStore, type SqlProjectStoreOptions } from './sql-project-store.js';
export { migrateToLatest, schemaMigrations, MIGRATION_TABLE, MIGRATION_LOCK_TABLE } from './migrations.js';
export {
  DEFAULT_SCHEMA_NAMES,
  resolveSchemaNames,
  type SchemaNames,
  type SchemaNamesInput,
  type ProjectsNames,
  type SessionsNames,
  type NodesNames,
} from './schema-names.js';
export { detectEngine, writeTransaction, SQL_ENGINES, type SqlEngine } from './engine.js';
export { inspectSchema, type SchemaInspection, type ContractTable } from './schema-inspect.js';
export {
  DEFAULT_VALUE_FORMATS,
  VALUE_FORMATS,
  resolveValueFormats,
  type ValueFormat,
  type ValueFormats,
  type ValueFormatsInput,
} from './value-formats.js';
export {
  defaultConfigPath,
  loadStoreConfig,
  parseStoreConfig,
  StoreConfigSchema,
  type StoreConfig,
} from './store-config.js';
export { watchDagChanges, type DagChanges, type DagChangesOptions } from './dag-changes.js';
export {
  parseMapping,
  isQueryMapping,
  type MappingInput,
  type TableMappingInput,
  type QueryMappingInput,
  type SessionsMappingInput,
  type NodesMappingInput,
  type SeqInput,
  type RoleInput,
  type OpenInput,
  type ValueSpec,
  type ValueSource,
} from './mapping/mapping-input.js';
export type {
  ResolvedMapping,
  ResolvedNodesMapping,
  ResolvedSessionsMapping,
  ResolvedSeq,
  ResolvedSource,
  ResolvedSpec,
} from './mapping/resolved-mapping.js';
export type { DialectQuery, NodesQueryInput, SessionsQueryInput } from './mapping/query-input.js';
export type { ResolvedQuery, ResolvedQueryMapping } from './mapping/query-mapping.js';
export { KNOWN_SCHEMAS } from './known-schemas/recognise.js';
export type { KnownSchema } from './known-schemas/known-schema.js';
