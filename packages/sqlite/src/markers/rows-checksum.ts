import { hash } from 'node:crypto';

/**
 * The SQLite aggregate the change markers of a database without entity-git's triggers are
 * computed with: `entity_git_rows_checksum(col, …)` over a group of rows is the sum, modulo 2^64,
 * of the first 64 bits of each row's SHA-1 over a canonical text of its values. A sum does not
 * depend on the order SQLite visits the rows in, so `GROUP BY` needs no `ORDER BY`.
 *
 * The function lives on the connection (better-sqlite3's `db.aggregate`), never in the file:
 * registering it writes nothing, and `directOnly` keeps the database's own triggers and views
 * from using it.
 */
export const ROWS_CHECKSUM_FUNCTION = 'entity_git_rows_checksum';

const MASK_64 = (1n << 64n) - 1n;

/** The slice of better-sqlite3's `Database` the function needs, so the package needs no types of it. */
export interface AggregateHost {
  aggregate(
    name: string,
    options: {
      start: () => bigint;
      step: (total: bigint, ...values: unknown[]) => bigint;
      result: (total: bigint) => string;
      varargs: true;
      deterministic: true;
      directOnly: true;
      safeIntegers: true;
    },
  ): unknown;
}

/**
 * Registers {@link ROWS_CHECKSUM_FUNCTION} on a better-sqlite3 connection. `openSqlite` does it on
 * its own; call it on a connection of yours before `createSqlStore({ db })` over it, or the
 * markers of a database without triggers are null (the full check).
 */
export function registerRowsChecksum(database: AggregateHost): void {
  database.aggregate(ROWS_CHECKSUM_FUNCTION, {
    start: () => 0n,
    step: (total, ...values) => (total + rowHash(values)) & MASK_64,
    result: (total) => total.toString(16),
    varargs: true,
    deterministic: true,
    directOnly: true,
    // Integers as BigInt: a number would round those past 2^53, and two values would hash alike.
    safeIntegers: true,
  });
}

/**
 * The first 64 bits of the SHA-1 of the row's canonical text: each value a tag, then its text —
 * a string or a blob with its length first, a number ended by `;` — so the text of a row is one
 * row's only (a prefix code). A REAL is JavaScript's shortest text that reads back as the same
 * double; an INTEGER its decimal digits.
 */
function rowHash(values: readonly unknown[]): bigint {
  let text = '';
  for (const v of values) {
    if (v === null || v === undefined) text += 'n';
    else if (typeof v === 'string') text += `s${v.length}:${v}`;
    else if (typeof v === 'bigint') text += `i${v};`;
    else if (typeof v === 'number') text += `r${v};`;
    else if (v instanceof Uint8Array)
      text += `b${v.length}:${Buffer.from(v.buffer, v.byteOffset, v.length).toString('hex')}`;
    else {
      const other = String(v);
      text += `o${other.length}:${other}`;
    }
  }
  // Parsing the hex digest is quicker than reading a Buffer of it (measured), and this runs once a row.
  return BigInt(`0x${hash('sha1', text).slice(0, 16)}`);
}
