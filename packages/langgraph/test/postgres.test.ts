import { join } from 'node:path';
import { createNodeMirror } from '@entity-git/node-fs';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../../sqlite/test/helpers/postgres.js';
import { createLangGraphDag } from '../src/index.js';
import { branches, fsck, git, removeTempDirs, tempDir } from './helpers/git.js';
import { runTrip, TRIP } from './helpers/trip.js';

afterAll(removeTempDirs);

/** Every table of the database's public schema: its row count and a hash of all its rows. */
async function postgresRows(url: string): Promise<Record<string, string>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ name: string }>(
      `select table_name as name from information_schema.tables where table_schema = 'public' order by 1`,
    );
    const out: Record<string, string> = {};
    for (const { name } of tables.rows) {
      const r = await client.query<{ n: string; h: string | null }>(
        `select count(*) as n, md5(string_agg(t::text, E'\\n' order by t::text)) as h from "${name}" t`,
      );
      out[name] = `${r.rows[0]!.n}:${r.rows[0]!.h}`;
    }
    return out;
  } finally {
    await client.end();
  }
}

async function mirrorOf(saver: SqliteSaver | PostgresSaver, root: string) {
  const dag = createLangGraphDag({ saver });
  const mirror = createNodeMirror({ dag, root });
  expect(await dag.listSessions()).toEqual([TRIP]);
  await mirror.sync(TRIP);
  return mirror.repoPath(TRIP);
}

/**
 * `PostgresSaver` with channel versions unique per write, as LangGraph's Python saver mints
 * them. The JS saver (1.0.5) numbers a channel's versions 1, 2, 3… and keeps one blob per
 * (thread, channel, version), the first written: two branches of a time travel that reach the
 * same number share the first one's messages, so the second reads (and runs on) its sibling's
 * state. The application's fix, in the test, so that the scenario is the one it means.
 */
class UniqueVersionSaver extends PostgresSaver {
  override getNextVersion(current: number | undefined): number {
    const n = current === undefined ? 0 : Number.parseInt(String(current).split('.')[0]!, 10);
    const version = `${String(n + 1).padStart(32, '0')}.${String(Math.random()).slice(2).padEnd(16, '0')}`;
    return version as unknown as number;
  }
}

// ENTITY_GIT_PG_URL, or the cluster scripts/start-postgres.sh starts (as the sql package's suites do).
describe('the same agent on the PostgreSQL checkpointer', () => {
  it('gives the very commits of the SQLite run at the same clock, and leaves its tables as they were', async () => {
    const db = await freshDatabase();
    try {
      const writer = new UniqueVersionSaver(new pg.Pool({ connectionString: db.url }));
      await writer.setup();
      await runTrip(writer);
      await writer.end();
      const before = await postgresRows(db.url);
      expect(Object.keys(before)).toEqual([
        'checkpoint_blobs',
        'checkpoint_migrations',
        'checkpoint_writes',
        'checkpoints',
      ]);

      // The same scenario on SQLite, at the same clock: the same messages at the same times.
      const dir = tempDir();
      const sqliteWriter = SqliteSaver.fromConnString(join(dir, 'checkpoints.sqlite'));
      await runTrip(sqliteWriter);
      const expected = await mirrorOf(sqliteWriter, join(dir, 'from-sqlite'));
      sqliteWriter.db.close();

      const reader = PostgresSaver.fromConnString(db.url);
      try {
        const repo = await mirrorOf(reader, join(dir, 'from-postgres'));
        expect(branches(repo)).toEqual(branches(expected));
        expect(Object.keys(branches(repo)).sort()).toEqual(['fork-h4', 'main', 'retry-a7']);
        expect(git(repo, 'symbolic-ref', 'HEAD')).toBe(git(expected, 'symbolic-ref', 'HEAD'));
        expect(git(repo, 'status', '--porcelain')).toBe('');
        expect(fsck(repo)).toBe('');
      } finally {
        await reader.end();
      }
      expect(await postgresRows(db.url)).toEqual(before);
    } finally {
      await db.drop();
    }
  });
});
