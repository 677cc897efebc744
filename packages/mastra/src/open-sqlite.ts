import { fileURLToPath } from 'node:url';
import { EntityGitError } from '@entity-git/core';
import { Kysely, SqliteDialect, type SqliteDatabase } from 'kysely';
import { MastraDag, type MastraDagOptions } from './mastra-dag.js';
import { assembleStore, MASTRA_SQLITE_NAME, type MastraStore } from './mastra-store.js';

/** How long a read waits for a writer's lock before SQLITE_BUSY (ms), by default. */
export const DEFAULT_BUSY_TIMEOUT_MS = 10_000;

export interface OpenMastraSqliteOptions extends Omit<MastraDagOptions, 'db' | 'schema'> {
  /**
   * The database file: a path, or the `file:` URL given to Mastra's `LibSQLStore`
   * (`file:./mastra.db`, `file:///abs/mastra.db`; relative to the current directory, as libSQL
   * reads it). It must exist.
   */
  file: string;
  /** Busy timeout in ms (default {@link DEFAULT_BUSY_TIMEOUT_MS}). */
  busyTimeoutMs?: number;
}

// The slice of better-sqlite3 used here, so the types need no @types/better-sqlite3.
type BetterSqlite3 = new (
  filename: string,
  options?: { readonly?: boolean; fileMustExist?: boolean; timeout?: number },
) => SqliteDatabase;

/**
 * Opens a libSQL / SQLite file of Mastra's storage **read-only** (better-sqlite3's `readonly`
 * mode: SQLite itself refuses any write on the connection) and returns its store. A libSQL file
 * is a SQLite file. Remote libSQL (`libsql://`, `http(s)://`) is not a file: give
 * {@link MastraDag} a Kysely over a libSQL dialect instead.
 */
export async function openMastraSqlite(options: OpenMastraSqliteOptions): Promise<MastraStore> {
  const frozen = Object.freeze({ ...options });
  const file = filePath(frozen.file);
  const timeout = frozen.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  if (!Number.isSafeInteger(timeout) || timeout < 0)
    throw new EntityGitError('INVALID_OPTION', '[mastra] busyTimeoutMs must be a non-negative integer', {
      busyTimeoutMs: timeout,
    });
  let Database: BetterSqlite3;
  try {
    Database = ((await import('better-sqlite3')) as unknown as { default: BetterSqlite3 }).default;
  } catch (err) {
    throw new EntityGitError(
      'INVALID_OPTION',
      '[mastra] openMastraSqlite needs the `better-sqlite3` package installed (an optional peer dependency)',
      { file },
      { cause: err },
    );
  }
  let database: SqliteDatabase;
  try {
    database = new Database(file, { readonly: true, fileMustExist: true, timeout });
  } catch (err) {
    throw new EntityGitError(
      'DB_ERROR',
      `[mastra] cannot open ${JSON.stringify(file)} read-only: ${(err as Error).message}`,
      { file },
      { cause: err },
    );
  }
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database }) });
  const { file: _file, busyTimeoutMs: _timeout, ...rest } = frozen;
  return assembleStore(MASTRA_SQLITE_NAME, db, new MastraDag({ ...rest, db }));
}

function filePath(file: unknown): string {
  if (typeof file !== 'string' || file === '')
    throw new EntityGitError('INVALID_OPTION', '[mastra] file must be a non-empty path or file: URL', { file });
  if (file.startsWith('file:')) {
    try {
      // `file:///abs/x.db` as a URL; libSQL's `file:./x.db` and `file:/abs/x.db` as a path (a query dropped).
      return file.startsWith('file://')
        ? fileURLToPath(file)
        : decodeURIComponent(file.slice('file:'.length).split('?')[0]!);
    } catch (err) {
      throw new EntityGitError(
        'INVALID_OPTION',
        `[mastra] ${JSON.stringify(file)} is not a file URL`,
        { file },
        { cause: err },
      );
    }
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(file))
    throw new EntityGitError(
      'INVALID_OPTION',
      '[mastra] openMastraSqlite reads a file; for a remote libSQL database give MastraDag a Kysely over a libSQL dialect',
      { file },
    );
  return file;
}
