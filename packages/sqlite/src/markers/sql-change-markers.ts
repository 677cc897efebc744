import type { SqlEngine } from '../engine.js';
import { sql, type Kysely } from 'kysely';
import type { QueryReader } from '../mapping/query-reader.js';
import type { ResolvedMapping } from '../mapping/resolved-mapping.js';
import { NODE_COLUMNS, SESSION_COLUMNS } from '../rows.js';
import type { SchemaNames } from '../schema-names.js';
import type { ValueFormats } from '../value-formats.js';
import {
  cannotCompute,
  readContentMarkers,
  readingFingerprint,
  type ContentMarker,
  type MarkedTables,
  type MarkerScope,
} from './content-markers.js';
import { readAllChangeMarkers, readChangeMarker } from './revision-marks.js';

export interface SqlChangeMarkersOptions {
  db: Kysely<any>;
  /** Null: a dialect that is neither SQLite nor PostgreSQL, which gets no computed marker. */
  engine: SqlEngine | null;
  names: SchemaNames;
  formats: ValueFormats;
  mapping: ResolvedMapping | null;
  /** The query form of a mapping: its markers are computed through its queries. Default none. */
  queries?: QueryReader | null;
  /** The connection cannot write: SQLite's `data_version` then moves with every commit. */
  readOnlyConnection: boolean;
  /**
   * For a mapping: the time (seconds) before which a session's newest row makes it quiet. A
   * marker says whether the session is quiet, so a session that went quiet since its last sync
   * (its open turns now complete) gets the full check though no row changed.
   */
  quietBefore?: () => number;
}

/**
 * The change markers of one SQL source, single and batched, each batched value the single one.
 * Entity-git's own schema with its triggers: the revisions they keep (`revision-marks.ts`). A
 * database without them (an application's tables read through a mapping, or entity-git's layout
 * made by the application): markers computed from the rows (`content-markers.ts`). A database
 * that can give neither (no function on a SQLite connection of the caller's, another dialect):
 * null, the full check. What was found missing is not asked for again.
 */
export class SqlChangeMarkers {
  private revisions: 'unknown' | 'absent' = 'unknown';
  private contentAbsent: boolean;
  private readonly tables: MarkedTables;
  private readonly fingerprint: string;
  /** Computed markers, valid while SQLite's `data_version` is `cachedAt` (null: none kept). */
  private readonly cache = new Map<string, ContentMarker>();
  private cachedAt: number | null = null;

  constructor(private readonly options: SqlChangeMarkersOptions) {
    const { engine, names, formats, mapping } = options;
    const queries = options.queries ?? null;
    // An application's tables are never given triggers: no revision to look for.
    if (mapping !== null || queries !== null) this.revisions = 'absent';
    this.contentAbsent = engine === null;
    this.tables = markedTables(names, mapping);
    this.fingerprint = readingFingerprint(
      engine ?? 'sqlite',
      this.tables,
      queries?.mapping ?? mapping ?? { names, formats },
    );
  }

  async one(sessionId: string): Promise<string | null> {
    if (this.revisions === 'unknown') {
      const marker = await readChangeMarker(this.options.db, this.options.names, sessionId);
      if (marker !== 'absent') return marker;
      this.revisions = 'absent';
    }
    const content = await this.content({ one: sessionId }).catch(() => null);
    const found = content?.get(sessionId);
    return found === undefined ? null : this.withQuiet(found);
  }

  /** Every session asked for (`null`: every session with a row) with its marker or null. */
  async many(sessionIds: readonly string[] | null): Promise<Map<string, string | null>> {
    let found: Map<string, string> | null = null;
    try {
      if (this.revisions === 'unknown') {
        const revisions = await readAllChangeMarkers(this.options.db, this.options.names);
        if (revisions === 'absent') this.revisions = 'absent';
        else found = revisions;
      }
      if (found === null) {
        const content = await this.content(sessionIds === null ? null : { among: sessionIds });
        found =
          content === null ? null : new Map([...content].map(([id, marker]) => [id, this.withQuiet(marker)] as const));
      }
    } catch {
      return new Map();
    }
    if (found === null) return sessionIds === null ? new Map() : new Map(sessionIds.map((id) => [id, null]));
    if (sessionIds === null) return found;
    return new Map(sessionIds.map((id) => [id, found!.get(id) ?? null]));
  }

  /** The marker, and `.q` once the session's newest row is older than the quiet time. */
  private withQuiet(found: ContentMarker): string {
    const cutoff = this.options.quietBefore?.();
    return cutoff !== undefined && found.newest !== null && found.newest < cutoff ? `${found.marker}.q` : found.marker;
  }

  /** Null when this database cannot compute them. */
  private async content(scope: MarkerScope): Promise<Map<string, ContentMarker> | null> {
    if (this.contentAbsent) return null;
    const { db, engine } = this.options;
    // Read before the markers' snapshot begins: a commit after it moves it, whether or not the
    // snapshot holds that commit, so a marker kept is never older than the rows.
    const version = await this.dataVersion();
    if (version !== null && version !== this.cachedAt) {
      this.cache.clear();
      this.cachedAt = null;
    }
    if (version !== null && scope !== null && 'one' in scope && this.cache.has(scope.one))
      return new Map([[scope.one, this.cache.get(scope.one)!]]);
    const queries = this.options.queries ?? null;
    const markers =
      queries !== null
        ? await queries.markers(scope, this.fingerprint).catch((err: unknown) => {
            if (cannotCompute(err)) return 'absent' as const;
            throw err;
          })
        : await readContentMarkers({ db, engine: engine!, tables: this.tables, fingerprint: this.fingerprint }, scope);
    if (markers === 'absent') {
      this.contentAbsent = true;
      return null;
    }
    if (version !== null) {
      this.cachedAt = version;
      for (const [id, marker] of markers) this.cache.set(id, marker);
    }
    return markers;
  }

  /**
   * SQLite's count of commits by other connections, on a connection that cannot write; else null.
   * A connection that writes moves no `data_version` with its own commits, so nothing is kept there.
   */
  private async dataVersion(): Promise<number | null> {
    if (!this.options.readOnlyConnection || this.options.engine !== 'sqlite') return null;
    try {
      const r = await sql<{ data_version: unknown }>`pragma data_version`.execute(this.options.db);
      const v = Number(r.rows[0]?.data_version);
      return Number.isSafeInteger(v) ? v : null;
    } catch {
      return null;
    }
  }
}

/** The tables and columns the reads select: what a marker must change with. */
function markedTables(names: SchemaNames, mapping: ResolvedMapping | null): MarkedTables {
  if (mapping !== null) {
    const S = mapping.sessions;
    const N = mapping.nodes;
    return {
      sessions: { table: S.table, key: S.id, columns: S.columns },
      nodes: {
        table: N.table,
        key: N.session_id,
        columns: N.columns,
        newest: N.created_at,
        newestFormat: N.createdFormat,
      },
    };
  }
  const S = names.sessions as unknown as Record<string, string | null>;
  const N = names.nodes as unknown as Record<string, string | null>;
  const present = (map: Record<string, string | null>, columns: readonly string[]) =>
    columns.map((c) => map[c]).filter((c): c is string => typeof c === 'string');
  return {
    sessions: { table: names.sessions.table, key: names.sessions.id, columns: present(S, SESSION_COLUMNS) },
    nodes: { table: names.nodes.table, key: names.nodes.session_id, columns: present(N, NODE_COLUMNS) },
  };
}
