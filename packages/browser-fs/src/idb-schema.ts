import type { DagNode, ProjectStatus } from '@entity-git/core';
import type { DBSchema, IDBPDatabase, IDBPTransaction, StoreNames } from 'idb';

/** The IndexedDB database the DAG lives in unless told otherwise. */
export const DEFAULT_DAG_NAME = 'entity-git-dag';
/** Nodes per page of {@link IdbDag.nodesAfter} when the caller gives no `batchSize`. */
export const DEFAULT_BATCH_SIZE = 500;
/** Pages larger than this are refused: the point of paging is a bounded footprint. */
export const MAX_BATCH_SIZE = 100_000;

export const SCHEMA_VERSION = 1;

/** A session row as stored: JSON values as JSON text (so values round-trip as MemoryDag's do). */
export interface SessionRow {
  id: string;
  title: string | null;
  agent_id: string | null;
  model: string | null;
  project_id: string | null;
  head: string | null;
  created_at: number;
  metadata: string;
  /** Creation order: `listSessions` and a project's sessions are given in it. */
  ord: number;
  /**
   * The change marker (docs/design.md, 'The data model'): set at creation to a random 48-bit
   * start, bumped in the same transaction as every write to the session or its nodes. Absent on
   * a row written by a version without markers (no marker: the mirror's full check) until the
   * session's next write.
   */
  rev?: number;
}

export interface NodeRow {
  session_id: string;
  seq: number;
  id: string;
  role: DagNode['role'];
  content: string;
  predecessor: string | null;
  caller: string | null;
  created_at: number;
  metadata: string;
}

export interface ProjectRow {
  id: string;
  name: string;
  workdir: string;
  status: ProjectStatus;
  description: string | null;
  created_at: number;
  ord: number;
}

/**
 * The schema (@entity-git/sqlite's schema in IndexedDB terms). `nodes` is keyed by
 * `[session_id, seq]` — the (session_id, seq) index of the SQL schema, here the primary key, so a
 * session's nodes are one key range read in seq order; `by_id` on `[session_id, id]` makes an id
 * unique per session (as in MemoryDag) and finds a node by id. A row whose `project_id` is null is
 * simply absent from `by_project` (null is no IndexedDB key).
 */
export interface DagSchema extends DBSchema {
  sessions: { key: string; value: SessionRow; indexes: { by_ord: number; by_project: string } };
  nodes: { key: [string, number]; value: NodeRow; indexes: { by_id: [string, string] } };
  projects: { key: string; value: ProjectRow; indexes: { by_ord: number; by_name: string } };
}

export type Db = IDBPDatabase<DagSchema>;
export type Names = StoreNames<DagSchema>;
export type Tx<S extends Names[]> = IDBPTransaction<DagSchema, S, 'readwrite' | 'readonly'>;
export type WTx<S extends Names[]> = IDBPTransaction<DagSchema, S, 'readwrite'>;

/** After the largest number: arrays sort after every number in IndexedDB's key order. */
export const AFTER_NUMBERS: [] = [];
