import type { Kysely } from 'kysely';

// kysely's Migrator, taken from whichever module of the installed kysely has it: 0.28 exports it
// from `kysely`, 0.29 only from `kysely/migration` (which 0.28 does not have). The peer range
// covers both, so the types it needs are declared here, in the shape both versions take.

/** One schema migration, as kysely's Migrator runs it. */
export interface Migration {
  up(db: Kysely<any>): Promise<void>;
  down?(db: Kysely<any>): Promise<void>;
}

/** The part of kysely's Migrator the migrations use. */
export interface MigratorLike {
  migrateToLatest(): Promise<{
    error?: unknown;
    results?: ReadonlyArray<{ migrationName: string; status: 'Success' | 'Error' | 'NotExecuted' }>;
  }>;
  getMigrations(): Promise<ReadonlyArray<{ name: string; executedAt?: Date | undefined }>>;
}

export type MigratorClass = new (props: {
  db: Kysely<any>;
  provider: { getMigrations(): Promise<Record<string, Migration>> };
  migrationTableName: string;
  migrationLockTableName: string;
}) => MigratorLike;

let loading: Promise<MigratorClass> | null = null;

/** kysely's Migrator class, from `kysely` or `kysely/migration`. */
export function loadMigrator(): Promise<MigratorClass> {
  loading ??= (async () => {
    const main = (await import('kysely')) as unknown as { Migrator?: unknown };
    if (typeof main.Migrator === 'function') return main.Migrator as MigratorClass;
    // A variable: the workspace's kysely (0.28) has no such entry for TypeScript to resolve.
    const entry = 'kysely/migration';
    const sub = (await import(entry)) as { Migrator?: unknown };
    if (typeof sub.Migrator === 'function') return sub.Migrator as MigratorClass;
    throw new Error('the installed kysely has no Migrator');
  })().catch((err: unknown) => {
    loading = null;
    throw err;
  });
  return loading;
}
