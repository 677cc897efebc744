import type { Kysely } from 'kysely';
import type { MastraDag } from './mastra-dag.js';

/** A read-only connection to a database of Mastra's storage, and its DAG source. */
export interface MastraStore {
  /** {@link MASTRA_SQLITE_NAME} or {@link MASTRA_POSTGRES_NAME}. */
  readonly name: string;
  /** The Kysely it reads through (for your own read-only queries). */
  readonly db: Kysely<any>;
  /** The `DagSource` to give the mirror. */
  readonly dag: MastraDag;
  /** Closes the connection; idempotent. */
  close(): Promise<void>;
}

/** `store.name` of {@link openMastraSqlite}. */
export const MASTRA_SQLITE_NAME = 'mastra-sqlite';
/** `store.name` of {@link openMastraPostgres}. */
export const MASTRA_POSTGRES_NAME = 'mastra-postgres';

/** The store over `db`: `close()` destroys the Kysely (once). */
export function assembleStore(name: string, db: Kysely<any>, dag: MastraDag): MastraStore {
  let closing: Promise<void> | null = null;
  return Object.freeze({ name, db, dag, close: () => (closing ??= db.destroy()) });
}
