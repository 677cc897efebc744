import pg from 'pg';

/**
 * The test cluster's URL (`ENTITY_GIT_PG_URL`): the project's global setup (test/postgres.global-setup.ts)
 * sets it, starting the cluster when it is not given. Undefined only outside vitest's projects; the
 * PostgreSQL tests are then skipped, with this warning.
 */
export const PG_URL = process.env.ENTITY_GIT_PG_URL || undefined;
if (PG_URL === undefined)
  console.warn(
    '[mastra tests] ENTITY_GIT_PG_URL is not set: the PostgreSQL tests are skipped (see packages/sqlite/README.md)',
  );

let counter = 0;

/** A new empty database on the test cluster; `drop` removes it. */
export async function freshDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `eg_mastra_${process.pid}_${++counter}_${Math.random().toString(36).slice(2, 8)}`;
  await admin((c) => c.query(`create database "${name}"`));
  const url = new URL(PG_URL!);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => admin(async (c) => void (await c.query(`drop database if exists "${name}" with (force)`))),
  };
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
