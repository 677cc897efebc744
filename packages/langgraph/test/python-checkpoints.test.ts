import { join } from 'node:path';
import { createNodeMirror } from '@entity-git/node-fs';
import { MemorySaver } from '@langchain/langgraph-checkpoint';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../../sqlite/test/helpers/postgres.js';
import {
  createLangGraphDag,
  openCheckpointsPostgres,
  openCheckpointsSqlite,
  type CheckpointStore,
} from '../src/index.js';
import { pythonCopy } from './helpers/from-js.js';
import { branches, fsck, removeTempDirs, tempDir } from './helpers/git.js';
import { writePythonPostgres, writePythonSqlite } from './helpers/python-store.js';
import { postgresRows } from './helpers/postgres-rows.js';
import { sqliteRows } from './helpers/sqlite-rows.js';
import { runTrip, TRIP } from './helpers/trip.js';

afterAll(removeTempDirs);

/** The application's fix of LangGraph.js 1.0.5's shared versions (see postgres.test.ts and the README). */
class UniqueVersionSaver extends PostgresSaver {
  override getNextVersion(current: number | undefined): number {
    const n = current === undefined ? 0 : Number.parseInt(String(current).split('.')[0]!, 10);
    return `${String(n + 1).padStart(32, '0')}.${String(Math.random()).slice(2).padEnd(16, '0')}` as unknown as number;
  }
}

async function tips(dag: Parameters<typeof createNodeMirror>[0]['dag'], root: string) {
  const mirror = createNodeMirror({ dag, root });
  await mirror.sync(TRIP);
  fsck(mirror.repoPath(TRIP));
  return branches(mirror.repoPath(TRIP));
}

describe("Python LangGraph's checkpoints, read from the tables", () => {
  it("give the commits of the same conversation written by LangGraph.js, on SQLite and PostgreSQL; so do LangGraph.js's own tables", async () => {
    const dir = tempDir();
    const js = new MemorySaver();
    await runTrip(js);
    const expected = await tips(createLangGraphDag({ saver: js }), join(dir, 'js'));
    expect(Object.keys(expected).sort()).toEqual(['fork-h4', 'main', 'retry-a7']);

    const specs = await pythonCopy(js, TRIP);
    const file = join(dir, 'python.sqlite');
    writePythonSqlite(file, specs);
    const before = sqliteRows(file);
    const lite: CheckpointStore = await openCheckpointsSqlite({ file });
    expect(await lite.dag.listSessions()).toEqual([TRIP]);
    expect(await tips(lite.dag, join(dir, 'py-sqlite'))).toEqual(expected);
    await lite.close();
    expect(sqliteRows(file)).toEqual(before);

    const { url, drop } = await freshDatabase();
    try {
      await writePythonPostgres(url, specs);
      const pgStore = await openCheckpointsPostgres({ connectionString: url });
      expect(await tips(pgStore.dag, join(dir, 'py-pg'))).toEqual(expected);
      await pgStore.close();
    } finally {
      await drop();
    }

    const jsFile = join(dir, 'js.sqlite');
    const saver = SqliteSaver.fromConnString(jsFile);
    await runTrip(saver);
    saver.db.close();
    const jsStore = await openCheckpointsSqlite({ file: jsFile });
    expect(await tips(jsStore.dag, join(dir, 'js-sqlite'))).toEqual(expected);
    await jsStore.close();

    // LangGraph.js's PostgresSaver (unique versions, see postgres.test.ts): its layout read the same way.
    const jsPg = await freshDatabase();
    try {
      const writer = new UniqueVersionSaver(new pg.Pool({ connectionString: jsPg.url }));
      await writer.setup();
      await runTrip(writer);
      await writer.end();
      const rows = await postgresRows(jsPg.url);
      const read = await openCheckpointsPostgres({ connectionString: jsPg.url });
      expect(await tips(read.dag, join(dir, 'js-pg'))).toEqual(expected);
      await read.close();
      expect(await postgresRows(jsPg.url)).toEqual(rows);
    } finally {
      await jsPg.drop();
    }
  });
});
