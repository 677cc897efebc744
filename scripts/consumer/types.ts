// The consumer's type-check (scripts/consumer-check.mjs runs tsc on it with `nodenext` and with
// `bundler`): every package's types resolve, and a Kysely of the application's own is accepted.
import {
  createMirror,
  EntityGitError,
  MemoryDag,
  type Mirror,
  type ProjectGit,
  type SyncResult,
} from '@entity-git/core';
import { type Repo, repositoryContext } from '@entity-git/core/repository';
import { createSessionQueue } from '@entity-git/core/session-queue';
import { browserStorage, createBrowserMirror } from '@entity-git/browser-fs';
import * as cli from '@entity-git/cli';
import { type EntityGitError as GitError, memoryStorage, ObjectStore, storeFor } from '@entity-git/git';
import { MastraDag, openMastraSqlite, type MastraStore } from '@entity-git/mastra';
import { createLangGraphDag, type CheckpointLister } from '@entity-git/langgraph';
import { createNodeMirror, nodeStorage } from '@entity-git/node-fs';
import { createObjectEngine, createProjectGit, type ProjectGitEngine } from '@entity-git/project';
import { createNodeProjectGit } from '@entity-git/project/node';
import { defineRemote, type FetchResult, restoreSessions } from '@entity-git/remote';
import { createSqlStore, openSqlite, type SqlStore } from '@entity-git/sqlite';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';

export async function check(): Promise<SyncResult> {
  const dag = new MemoryDag();
  const mirror: Mirror = createMirror({ dag, storage: nodeStorage(), root: '/tmp/x' });
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new Database(':memory:') }) });
  const store: SqlStore = await createSqlStore({ db });
  const file: SqlStore = await openSqlite({ file: ':memory:' });
  void createNodeMirror({ dag: store.dag, root: '/tmp/y' });
  // Mastra's tables read over the same Kysely, and its read-only opener.
  void createNodeMirror({ dag: new MastraDag({ db }), root: '/tmp/m' });
  const mastra: Promise<MastraStore> = openMastraSqlite({ file: 'file:./mastra.db' });
  void mastra;
  // Any checkpointer with LangGraph's `list` is a saver (the package does not import LangGraph).
  const saver: CheckpointLister = { async *list() {} };
  void createNodeMirror({ dag: createLangGraphDag({ saver }), root: '/tmp/w' });
  void [createBrowserMirror, browserStorage, file, cli];
  // The remote package, and core's two subpaths for packages built on it.
  void [defineRemote, restoreSessions, repositoryContext, createSessionQueue];
  const fetched: FetchResult | null = null;
  const repo: Repo | null = null;
  void [fetched, repo];
  // The project auto-commit: the browser-safe entry and Node's, typed by core's seam.
  const engine: ProjectGitEngine = createObjectEngine({ storage: memoryStorage() });
  const projectGits: ProjectGit[] = [createProjectGit({ engine }), createNodeProjectGit()];
  void projectGits;
  // The git package on its own, and core's error class is its class (one copy installed).
  void new ObjectStore(storeFor(memoryStorage()), '/tmp/z/.git');
  const same: typeof GitError = EntityGitError;
  void same;
  const e = new EntityGitError('INVALID_OPTION', 'x');
  const code: 'INVALID_OPTION' = e.code;
  void code;
  return mirror.sync('s1');
}
