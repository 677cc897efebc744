// Run by scripts/consumer-check.mjs with better-sqlite3 moved out of node_modules: a
// PostgreSQL-only application imports @entity-git/sqlite without the native module, and
// openSqlite says which package is missing.
import { openPostgres, openSqlite } from '@entity-git/sqlite';

if (typeof openPostgres !== 'function') throw new Error('openPostgres is not exported');
try {
  await openSqlite({ file: process.argv[2] });
  throw new Error('openSqlite opened a database without better-sqlite3');
} catch (err) {
  if (err.code !== 'INVALID_OPTION' || !err.message.includes('better-sqlite3')) throw err;
}
console.log('  without better-sqlite3: the package imports, openSqlite fails with INVALID_OPTION naming it');
