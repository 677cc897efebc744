import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';

const SCRIPT = fileURLToPath(new URL('../../../../scripts/start-postgres.sh', import.meta.url));
let counter = 0;

/**
 * The test cluster's URL: `ENTITY_GIT_PG_URL` when set (CI starts the cluster first), otherwise
 * from running scripts/start-postgres.sh, which is idempotent and serializes parallel callers,
 * so each test file may call it. No silent skip: without PostgreSQL these tests fail.
 */
export function postgresUrl(): string {
  if (process.env.ENTITY_GIT_PG_URL) return process.env.ENTITY_GIT_PG_URL;
  const run = spawnSync('bash', [SCRIPT], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 600_000 });
  const line = run.stdout?.split('\n').find((l) => l.startsWith('ENTITY_GIT_PG_URL='));
  if (run.status !== 0 || !line) {
    throw new Error(`scripts/start-postgres.sh failed (status ${run.status}): ${run.stderr || run.error?.message}`);
  }
  process.env.ENTITY_GIT_PG_URL = line.slice('ENTITY_GIT_PG_URL='.length);
  return process.env.ENTITY_GIT_PG_URL;
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  // Loaded here, not at the top: a file's SQLite tests should not depend on pg loading.
  const { default: Pg } = await import('pg');
  const client = new Pg.Client({ connectionString: postgresUrl() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A new empty database on the test cluster, for one test; `drop` removes it. */
export async function freshDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `eg_test_${process.pid}_${++counter}_${Math.random().toString(36).slice(2, 8)}`;
  await admin((c) => c.query(`create database "${name}"`));
  const url = new URL(postgresUrl());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => admin(async (c) => void (await c.query(`drop database if exists "${name}" with (force)`))),
  };
}
