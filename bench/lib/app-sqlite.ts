// The application's own connection to its SQLite file: better-sqlite3 as the SQL package has it
// installed (the benches write as an application would, beside entity-git's reads).
import { createRequire } from 'node:module';

export interface RawDb {
  exec(sql: string): void;
  pragma(sql: string): unknown;
  prepare(sql: string): { run(...values: unknown[]): unknown };
  transaction(fn: () => void): () => void;
  close(): void;
}

export const Database = createRequire(new URL('../../packages/sqlite/package.json', import.meta.url))(
  'better-sqlite3',
) as new (
  file: string,
) => RawDb;
