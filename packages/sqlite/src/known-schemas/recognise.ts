import type { Kysely } from 'kysely';
import type { SqlEngine } from '../engine.js';
import type { TableColumns } from '../mapping/resolved-mapping.js';
import { columnsOf } from '../schema-inspect.js';
import { isQueryMapping } from '../mapping/mapping-input.js';
import { FLAT_DAG_SCHEMA } from './flat-dag-schema.js';
import type { KnownSchema } from './known-schema.js';
import { MESSAGES_SCHEMA } from './messages-schema.js';
import { AGENTS_SDK_SCHEMA } from './agents-sdk-schema.js';
import { OPEN_WEBUI_MESSAGES_SCHEMA, OPEN_WEBUI_SCHEMA } from './open-webui-schema.js';
import { OPENCODE_SCHEMA } from './opencode-schema.js';
import type { SqlEngine as Engine } from '../engine.js';

/**
 * The schemas recognised with no configuration, in the order they are tried: the first whose
 * signature a database has, and whose mapping reads the database's engine, is it. A schema that
 * is a later version of another (more tables) comes before it.
 */
export const KNOWN_SCHEMAS: readonly KnownSchema[] = Object.freeze([
  MESSAGES_SCHEMA,
  FLAT_DAG_SCHEMA,
  OPEN_WEBUI_MESSAGES_SCHEMA,
  OPEN_WEBUI_SCHEMA,
  OPENCODE_SCHEMA,
  AGENTS_SDK_SCHEMA,
]);

/** The columns of entity-git's own `nodes` a database must have to be read as entity-git's own. */
const OWN_NODES = ['id', 'session_id', 'seq', 'role', 'content', 'predecessor', 'created_at'];

/** The columns of each table named (null: no such table); only reads the catalogue. */
export async function readTables(db: Kysely<any>, engine: SqlEngine, tables: Iterable<string>): Promise<TableColumns> {
  const out = new Map<string, ReadonlyMap<string, string> | null>();
  for (const t of new Set(tables)) out.set(t, await columnsOf(db, engine, t));
  return out;
}

/** Every table recognition looks at: the known schemas' and entity-git's own. */
export function tablesToRead(): string[] {
  return ['sessions', 'nodes', ...KNOWN_SCHEMAS.flatMap((k) => Object.keys(k.signature))];
}

/** Whether the database holds entity-git's own `nodes` table (then it is read as it always was). */
export function hasOwnSchema(tables: TableColumns): boolean {
  const nodes = tables.get('nodes');
  return nodes !== undefined && nodes !== null && OWN_NODES.every((c) => nodes.has(c));
}

/** The known schema whose every signature table and column the database has, and that reads `engine`, or null. */
export function recognise(tables: TableColumns, engine: Engine): KnownSchema | null {
  return KNOWN_SCHEMAS.find((k) => readsEngine(k, engine) && score(k, tables).missing.length === 0) ?? null;
}

/** A table-form mapping reads either engine; a query form those it has a query for. */
function readsEngine(k: KnownSchema, engine: Engine): boolean {
  if (!isQueryMapping(k.mapping)) return true;
  const q = k.mapping.nodes.query;
  return typeof q === 'string' || q[engine] !== undefined;
}

/** How near a database is to a known schema: the signature columns it has, and those it lacks. */
export interface Closeness {
  schema: string;
  matched: number;
  total: number;
  /** `table.column` (or `table` when the whole table is absent) of what is missing. */
  missing: string[];
}

/** The known schema with the most signature columns present (at least one), or null. */
export function closestKnown(tables: TableColumns): Closeness | null {
  let best: Closeness | null = null;
  for (const k of KNOWN_SCHEMAS) {
    const s = score(k, tables);
    if (s.matched > 0 && (best === null || s.matched / s.total > best.matched / best.total)) best = s;
  }
  return best;
}

function score(k: KnownSchema, tables: TableColumns): Closeness {
  let matched = 0;
  let total = 0;
  const missing: string[] = [];
  for (const [table, columns] of Object.entries(k.signature)) {
    const have = tables.get(table) ?? null;
    total += columns.length;
    if (have === null) {
      missing.push(table);
      continue;
    }
    for (const c of columns) {
      if (have.has(c)) matched++;
      else missing.push(`${table}.${c}`);
    }
  }
  return { schema: k.name, matched, total, missing };
}
