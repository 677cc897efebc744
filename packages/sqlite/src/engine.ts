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
      throw new EntityGitError('INVALID_OPTION', `[sqlite] engine must be one of ${SQL_ENGINES.join(', ')}`, {
        engine,
      });
    }
    return engine;
  }
  const detected = detectEngine(db);
  if (!detected) {
    throw new EntityGitError(
      'INVALID_OPTION',
      '[sqlite] cannot tell the SQL engine from the kysely dialect; pass `engine`',
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
  return normaliseError(err, { code: 'DB_ERROR', prefix: '[sqlite]', what, codeKey: 'driverCode' });
}

// SQL text cannot hold every JS string. A lone surrogate has no UTF-8 form, and both engines
// store text as UTF-8 (SQLite silently stores U+FFFD's bytes instead, so it would read back as
// another id). NUL differs: SQLite's text holds it (better-sqlite3 binds and returns it whole, and
// `=`, `ORDER BY`, indexes and UNIQUE compare every byte — only text functions such as `length()`
// stop at it, and no query here applies one to an id or a text field), while PostgreSQL refuses it
// in text. So a database with NUL in its ids is a SQLite one: it cannot be copied into PostgreSQL.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Why `value` cannot be stored as `engine`'s text and read back exactly (a phrase that follows
 * "holds"), or null when it can. An engine not known (a reader over another dialect) is held to
 * the rule of UTF-8 text alone.
 */
export function unstorableText(value: string, engine: SqlEngine | undefined): string | null {
  if (LONE_SURROGATE.test(value))
    return 'a lone surrogate, which SQL text cannot hold (it is stored as UTF-8, where a lone surrogate has no form)';
  if (engine === 'postgres' && value.includes('\u0000')) return 'NUL, which PostgreSQL text cannot hold';
  return null;
}

/** Whether a string reads back from `engine`'s text exactly as written. */
export function isStorableText(value: string, engine: SqlEngine | undefined): boolean {
  return unstorableText(value, engine) === null;
}

/** Throws `code` when a string field could not be stored faithfully as `engine`'s text. */
export function assertStorableText(
  value: string | null | undefined,
  what: string,
  code: ErrorCode,
  engine: SqlEngine | undefined,
): void {
  const why = typeof value === 'string' ? unstorableText(value, engine) : null;
  if (why !== null) throw new EntityGitError(code, `[sqlite] ${what} holds ${why}`, { what, engine });
}
