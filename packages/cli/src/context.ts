import { existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  DEFAULT_IDENTITY,
  LAYOUTS,
  type DagSource,
  type Layout,
  type Mirror,
  type ProjectStore,
  type Session,
} from '@entity-git/core';
import type { Identity } from '@entity-git/git';
import { createNodeMirror, defaultRoot } from '@entity-git/node-fs';
import {
  KNOWN_SCHEMAS,
  defaultConfigPath,
  loadStoreConfig,
  openPostgres,
  openSqlite,
  watchDagChanges,
  type DagChanges,
  type SqlStore,
  type StoreConfig,
} from '@entity-git/sqlite';
import { CliError } from './cli-error.js';
import { parseDuration } from './duration.js';
import { EXIT_USAGE } from './exit-codes.js';
import { openFrameworkContext } from './frameworks/framework-context.js';

/** `~/.openprogram/entity-git.db`, beside the default session root. */
export function defaultDb(): string {
  return join(homedir(), '.openprogram', 'entity-git.db');
}

export interface ContextOptions {
  db?: string | undefined;
  /** `--config FILE`; default: `<db file>.entity-git.json` when it exists. */
  config?: string | undefined;
  /** The command writes rows: it may create entity-git's missing tables (read commands never run DDL). */
  writes?: boolean;
  /** The command writes nothing to the database: it is opened read-only. */
  readOnly?: boolean;
  root?: string | undefined;
  identity?: string | undefined;
  layout?: string | undefined;
  /** `--quiet-time T`: when an application's open turns are committed (default: the store's, 5 minutes). */
  quietTime?: string | undefined;
  cwd: string;
  /** Where a warning about the database's content goes (a framework's unreadable Python type). */
  warn?: (line: string) => void;
}

/** How `watch` learns which sessions to sync again: the database's changes, and quiet open turns. */
export interface WatchOptions {
  /** PostgreSQL: LISTEN on this channel (default: the config's `notifyChannel`). */
  channel: string | undefined;
  /** The database URL (PostgreSQL's LISTEN opens a connection of its own). */
  connectionString: string | undefined;
}

/** The database and the mirror one command works on. */
export interface Context {
  /** What the mirror follows: the SQL store's DAG, or a framework's. */
  dag: DagSource;
  /** The known schema or framework the database was recognised as, or null. */
  recognised: string | null;
  /**
   * How the rows are read when they are not entity-git's own (a known schema, a framework's
   * store, a configured mapping), one line for people; null for entity-git's own schema.
   */
  reading: string | null;
  /** entity-git's projects, or null where the database has none (a framework's store). */
  projects: ProjectStore | null;
  /** The names/formats configuration in use (`{}` when none). */
  config: StoreConfig;
  mirror: Mirror;
  /** Absolute session root. */
  root: string;
  /** The sessions to sync again at each poll: those the database shows changed, and those whose open turn went quiet. */
  watch(options: WatchOptions): Promise<DagChanges>;
  close(): Promise<void>;
}

const POSTGRES_URL = /^postgres(ql)?:\/\//i;

/** Parses `Name <email>`, the form git prints and takes. */
export function parseIdentity(text: string): Identity {
  const m = /^\s*([^<>\n]*?)\s*<([^<>\s]+)>\s*$/.exec(text);
  if (!m || m[1] === '') throw new CliError(`--identity must look like "Name <email>", got ${JSON.stringify(text)}`);
  return { name: m[1]!, email: m[2]! };
}

export async function openContext(options: ContextOptions): Promise<Context> {
  const identity = options.identity === undefined ? DEFAULT_IDENTITY : parseIdentity(options.identity);
  const root = resolve(options.cwd, options.root ?? defaultRoot());
  if (options.layout !== undefined && !(LAYOUTS as readonly string[]).includes(options.layout)) {
    throw new CliError(
      `--layout must be one of ${LAYOUTS.join(', ')}, got ${JSON.stringify(options.layout)}`,
      EXIT_USAGE,
    );
  }
  const layout = options.layout as Layout | undefined;
  const db = options.db ?? defaultDb();
  let store: SqlStore;
  const explicit = options.config === undefined ? undefined : resolve(options.cwd, options.config);
  const load = (file: string | undefined, fallback?: string): StoreConfig =>
    file !== undefined
      ? loadStoreConfig(file)
      : fallback !== undefined
        ? loadStoreConfig(fallback, { required: false })
        : {};
  // Read commands check the tables and write nothing (no DDL, no journal mode); only the
  // commands that write rows may create what is missing (see the README).
  const schema = {
    migrate: options.writes === true,
    checkSchema: true,
    ...(options.quietTime === undefined ? {} : { quietMs: parseDuration(options.quietTime, '--quiet-time') }),
  };
  // A command that writes no row opens the database read-only: the driver itself refuses any write.
  const readonly = options.readOnly === true;
  let config: StoreConfig;
  // A framework's store is recognised unless a configuration says how to read the database.
  const framework = (file: string, engine: 'sqlite' | 'postgres') =>
    openFrameworkContext({
      db: file,
      engine,
      writes: options.writes === true,
      root,
      identity,
      layout,
      warn: options.warn ?? (() => undefined),
    });
  if (POSTGRES_URL.test(db)) {
    const fw = explicit === undefined ? await framework(db, 'postgres') : null;
    if (fw !== null) return fw;
    config = load(explicit);
    store = await openPostgres({ connectionString: db, ...storeConfig(config), ...schema, readonly });
  } else {
    const file = resolve(options.cwd, db);
    // better-sqlite3 creates a missing file; for a command that reads a DAG that would only hide
    // a wrong path behind an empty database.
    if (!existsSync(file)) {
      throw new CliError(
        `no database at ${file}${options.db === undefined ? ' (the default; pass --db PATH or --db postgres://URL)' : ''}`,
        EXIT_USAGE,
      );
    }
    if (!statSync(file).isFile()) throw new CliError(`--db ${file} is not a file`, EXIT_USAGE);
    const fw = explicit === undefined && !existsSync(defaultConfigPath(file)) ? await framework(file, 'sqlite') : null;
    if (fw !== null) return fw;
    config = load(explicit, defaultConfigPath(file));
    store = await openSqlite({ file, ...storeConfig(config), ...schema, readonly });
  }
  const mirror = createNodeMirror({
    dag: store.dag,
    root,
    identity,
    ...(layout ? { layout } : {}),
    ...(config.redaction === undefined ? {} : { redaction: config.redaction }),
  });
  return {
    dag: store.dag,
    recognised: store.recognised,
    reading: readingOf(store),
    projects: store.projects,
    config,
    mirror,
    root,
    watch: (o) => watchSqlStore(store, { ...o, channel: o.channel ?? config.notifyChannel }),
    close: () => store.close(),
  };
}

/** `watch` on a SQL store: its change markers, then the sessions whose open turn went quiet. */
async function watchSqlStore(store: SqlStore, options: WatchOptions): Promise<DagChanges> {
  if (options.channel !== undefined && store.engine !== 'postgres')
    throw new CliError('--channel is for a PostgreSQL database (SQLite is watched with data_version)');
  const changes = await watchDagChanges(store, {
    ...(options.channel === undefined ? {} : { channel: options.channel }),
    ...(options.connectionString === undefined ? {} : { connectionString: options.connectionString }),
  });
  return {
    ...changes,
    // A session whose open turn went quiet changed no row: it is synced again all the same.
    poll: async () => [...new Set([...(await changes.poll()), ...store.dag.quietSessions()])],
  };
}

/** What of a config file the store factories take (`notifyChannel` is the watch's). */
function storeConfig(config: StoreConfig): Pick<StoreConfig, 'names' | 'formats' | 'mapping'> {
  return { names: config.names, formats: config.formats, mapping: config.mapping };
}

/** The line that says how a SQL store's rows are read, when they are not entity-git's own. */
function readingOf(store: SqlStore): string | null {
  if (store.recognised !== null) {
    const known = KNOWN_SCHEMAS.find((k) => k.name === store.recognised);
    return `recognised the ${JSON.stringify(store.recognised)} schema: ${known?.description ?? 'a known schema'}; read as it is, never written`;
  }
  if (store.mapping !== null) return 'read through the configured mapping, as it is, never written';
  return null;
}

/** entity-git's projects, or a usage error where the database has none (a framework's store). */
export function requireProjects(ctx: Context): ProjectStore {
  if (ctx.projects !== null) return ctx.projects;
  throw new CliError(
    `this database (${ctx.recognised ?? "not entity-git's"}) has no entity-git tables: projects live in entity-git's own database`,
  );
}

/** The session row, or a usage error naming the database. */
export async function requireSession(ctx: Context, sessionId: string): Promise<Session> {
  const session = await ctx.dag.getSession(sessionId);
  if (session === null) throw new CliError(`no session ${JSON.stringify(sessionId)} in the database`);
  return session;
}

/** Like {@link requireSession}, and the session must have been mirrored already. */
export async function requireRepository(ctx: Context, sessionId: string): Promise<void> {
  await requireSession(ctx, sessionId);
  if (!existsSync(join(ctx.mirror.repoPath(sessionId), '.git', 'HEAD'))) {
    throw new CliError(
      `session ${JSON.stringify(sessionId)} has no repository under ${ctx.root} yet (run: entity-git sync --session ${shellWord(sessionId)})`,
    );
  }
}

function shellWord(s: string): string {
  return /^[\w.@%+=:,/-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
