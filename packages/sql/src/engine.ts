import { EntityGitError, normaliseError, type ErrorCode } from '@entity-git/core';
import { PostgresAdapter, SqliteAdapter, sql, type Kysely } from 'kysely';

/**
 * The SQL engines whose locking the writer knows. Reading (`SqlDagSource`) works over any kysely
 * dialect; writing needs to know how to serialize appends, which is engine-specific.
 */
export type SqlEngine = 'sqlite' | 'postgres';

export const SQL_ENGINES: readonly SqlEngine[] = ['sqlite', 'postgres'];

/**
 * The engine behind a Kysely instance, from its dialect adapter. The class-name fallback covers a
 * second copy of kysely in `node_modules` and third-party dialects whose adapters extend kysely's.
 */
export function detectEngine(db: Kysely<any>): SqlEngine | undefined {
  const adapter: object = db.getExecutor().adapter;
  if (adapter instanceof SqliteAdapter) return 'sqlite';
  if (adapter instanceof PostgresAdapter) return 'postgres';
  for (
    let proto = Object.getPrototypeOf(adapter);
    proto && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    const name = String((proto as { constructor?: { name?: unknown } }).constructor?.name ?? '');
    if (/sqlite/i.test(name)) return 'sqlite';
    if (/postgres/i.test(name)) return 'postgres';
  }
  return undefined;
}

/** The engine to write with: the one given (checked) or the detected one; `INVALID_OPTION` otherwise. */
export function resolveEngine(db: Kysely<any>, engine: SqlEngine | undefined): SqlEngine {
  if (engine !== undefined) {
    if (!SQL_ENGINES.includes(engine)) {
      throw new EntityGitError('INVALID_OPTION', `[sql] engine must be one of ${SQL_ENGINES.join(', ')}`, {
        engine,
      });
    }
    return engine;
  }
  const detected = detectEngine(db);
  if (!detected) {
    throw new EntityGitError(
      'INVALID_OPTION',
      '[sql] cannot tell the SQL engine from the kysely dialect; pass `engine`',
    );
  }
  return detected;
}

/**
 * Runs `fn` in a write transaction that cannot fail half-way with SQLITE_BUSY.
 *
 * SQLite: kysely's `db.transaction()` issues a plain (deferred) `BEGIN`; a deferred transaction
 * that has read and then tries to write gets SQLITE_BUSY at once, without the busy timeout, when
 * another process committed in between. So we take kysely's single connection and issue
 * `BEGIN IMMEDIATE` ourselves: the write lock is taken up front, and waiting for it honours
 * `busy_timeout`. PostgreSQL: an ordinary transaction; callers lock the rows they serialize on.
 */
export async function writeTransaction<T>(
  db: Kysely<any>,
  engine: SqlEngine,
  fn: (trx: Kysely<any>) => Promise<T>,
): Promise<T> {
  if (engine !== 'sqlite') return db.transaction().execute(fn);
  return db.connection().execute(async (conn) => {
    await sql`begin immediate`.execute(conn);
    let result: T;
    try {
      result = await fn(conn);
    } catch (err) {
      try {
        await sql`rollback`.execute(conn);
      } catch {
        // SQLite rolls back by itself on some errors (SQLITE_FULL, IOERR); the first error is the news.
      }
      throw err;
    }
    try {
      await sql`commit`.execute(conn);
    } catch (err) {
      await sql`rollback`.execute(conn).catch(() => undefined);
      throw err;
    }
    return result;
  });
}

/**
 * A driver's failure as a typed error: the one normaliser with this package's code and prefix
 * (`DB_ERROR`, the driver's own code kept as `driverCode`); our own typed errors pass through.
 */
export function dbError(err: unknown, what: string): EntityGitError {
  return normaliseError(err, { code: 'DB_ERROR', prefix: '[sql]', what, codeKey: 'driverCode' });
}

// SQL text cannot hold every JS string: PostgreSQL refuses NUL in text, and a lone surrogate has no
// UTF-8 form (SQLite silently stores U+FFFD instead). Refusing both everywhere keeps a database
// portable between the engines and makes every stored string read back exactly.
const UNSTORABLE = /[\u0000\uD800-\uDFFF]/u;

/** Whether a string reads back from SQL text exactly as written. */
export function isStorableText(value: string): boolean {
  return !UNSTORABLE.test(value);
}

/** Throws `code` when a string field could not be stored faithfully as SQL text. */
export function assertStorableText(value: string | null | undefined, what: string, code: ErrorCode): void {
  if (typeof value === 'string' && !isStorableText(value)) {
    throw new EntityGitError(code, `[sql] ${what} contains NUL or a lone surrogate, which SQL text cannot store`, {
      what,
    });
  }
}
