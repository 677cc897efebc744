import { EntityGitError } from '@entity-git/core';
import type { StorageFs } from '@entity-git/git';
import { openDB } from 'idb';
import { dbError, PREFIX } from './errors.js';
import { checkBatchSize } from './idb-rows.js';
import {
  DEFAULT_BATCH_SIZE,
  DEFAULT_DAG_NAME,
  SCHEMA_VERSION,
  type DagSchema,
  type Db,
  type Names,
  type Tx,
  type WTx,
} from './idb-schema.js';

export interface IdbDagOptions {
  /** The IndexedDB database name. Default {@link DEFAULT_DAG_NAME}. */
  name?: string;
  /** Default page size of `nodesAfter`. Default {@link DEFAULT_BATCH_SIZE}. */
  batchSize?: number;
  /** The clock for default `created_at`s, in seconds since the epoch. Default `Date.now() / 1000`. */
  now?: () => number;
  /**
   * The file system project workdirs live in (a browser project's files are in LightningFS:
   * pass `browserStorage().fs`). When given, `createProject` checks that the workdir is an
   * existing directory there; without it only that the path is absolute (as MemoryDag does).
   */
  workdirs?: Pick<StorageFs, 'stat'>;
}

/**
 * The connection under {@link IdbDag}: its options, the database (opened on first use, and again
 * after another tab's upgrade), and one read-only or read-write transaction at a time.
 */
export class IdbConnection {
  readonly options: Readonly<{
    name: string;
    batchSize: number;
    now: () => number;
    workdirs: Pick<StorageFs, 'stat'> | null;
  }>;
  private connection: Promise<Db> | null = null;
  private closed = false;

  /** Prefer {@link openIdbDag}, which also opens the database (and so fails early). */
  constructor(options: IdbDagOptions = {}) {
    this.options = Object.freeze({
      name: options.name ?? DEFAULT_DAG_NAME,
      batchSize: checkBatchSize(options.batchSize ?? DEFAULT_BATCH_SIZE),
      now: options.now ?? (() => Date.now() / 1000),
      workdirs: options.workdirs ?? null,
    });
    if (typeof this.options.name !== 'string' || this.options.name === '')
      throw new EntityGitError('INVALID_OPTION', `${PREFIX} the database name must be a non-empty string`);
  }

  /** The open database; opened again after another tab's upgrade or a browser-side close. */
  protected db(): Promise<Db> {
    if (this.closed)
      return Promise.reject(
        new EntityGitError('DB_ERROR', `${PREFIX} the DAG database ${JSON.stringify(this.options.name)} is closed`),
      );
    if (this.connection === null) {
      const forget = () => {
        this.connection = null;
      };
      const opening = openDB<DagSchema>(this.options.name, SCHEMA_VERSION, {
        upgrade(db) {
          const sessions = db.createObjectStore('sessions', { keyPath: 'id' });
          sessions.createIndex('by_ord', 'ord', { unique: true });
          sessions.createIndex('by_project', 'project_id');
          const nodes = db.createObjectStore('nodes', { keyPath: ['session_id', 'seq'] });
          nodes.createIndex('by_id', ['session_id', 'id'], { unique: true });
          const projects = db.createObjectStore('projects', { keyPath: 'id' });
          projects.createIndex('by_ord', 'ord', { unique: true });
          projects.createIndex('by_name', 'name', { unique: true });
        },
        // Another tab wants a newer schema or to delete the database: let it.
        blocking: () => {
          void opening.then((db) => db.close());
          forget();
        },
        terminated: forget,
      });
      this.connection = opening
        .then((db) => {
          const missing = (['sessions', 'nodes', 'projects'] as const).filter((s) => !db.objectStoreNames.contains(s));
          if (missing.length > 0) {
            db.close();
            throw new EntityGitError(
              'DB_ERROR',
              `${PREFIX} the IndexedDB database ${JSON.stringify(this.options.name)} exists but is not an entity-git DAG (no ${missing.join(', ')} store): give the DAG a database of its own`,
              { name: this.options.name, missing },
            );
          }
          return db;
        })
        .catch((err: unknown) => {
          forget();
          throw dbError(err, `opening the DAG database ${JSON.stringify(this.options.name)}`);
        });
    }
    return this.connection;
  }

  /** Open the database now (creating its schema), so a blocked or refused open fails here. */
  async open(): Promise<this> {
    await this.db();
    return this;
  }

  /** Close the connection; the instance cannot be used afterwards. */
  async close(): Promise<void> {
    const c = this.connection;
    this.closed = true;
    this.connection = null;
    if (c) (await c.catch(() => null))?.close();
  }

  /** One read-only transaction. */
  protected async read<S extends Names[], T>(stores: S, what: string, fn: (tx: Tx<S>) => Promise<T>): Promise<T> {
    const db = await this.db();
    try {
      const tx = db.transaction(stores, 'readonly');
      return await fn(tx);
    } catch (err) {
      throw dbError(err, what);
    }
  }

  /**
   * One read-write transaction: `fn` may only await IndexedDB requests (anything else lets the
   * transaction commit early). A typed error thrown by `fn` aborts it, so nothing is stored.
   */
  protected async write<S extends Names[], T>(stores: S, what: string, fn: (tx: WTx<S>) => Promise<T>): Promise<T> {
    const db = await this.db();
    let tx: WTx<S>;
    try {
      tx = db.transaction(stores, 'readwrite');
    } catch (err) {
      throw dbError(err, what);
    }
    let result: T;
    try {
      result = await fn(tx);
    } catch (err) {
      try {
        tx.abort();
      } catch {
        // already finished
      }
      await tx.done.catch(() => undefined);
      throw dbError(err, what);
    }
    try {
      await tx.done;
    } catch (err) {
      throw dbError(err, what);
    }
    return result;
  }
}
