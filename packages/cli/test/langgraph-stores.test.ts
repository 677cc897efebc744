// The CLI on LangGraph checkpoint stores, with no configuration: Python's (fixtures built from
// the format's facts) on SQLite and PostgreSQL, and LangGraph.js's SQLite file made by the real
// package. Each gives the commits of the same conversation mirrored through LangGraph.js's own
// saver, and no command changes a row.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createNodeMirror } from '@entity-git/node-fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { pythonCopy } from '../../langgraph/test/helpers/from-js.js';
import { postgresRows } from '../../langgraph/test/helpers/postgres-rows.js';
import {
  FALLBACK,
  ODD,
  TRAVEL,
  fallbackThread,
  oddThread,
  travelThread,
} from '../../langgraph/test/helpers/python-fixtures.js';
import {
  type CheckpointSpec,
  writePythonPostgres,
  writePythonSqlite,
} from '../../langgraph/test/helpers/python-store.js';
import { sqliteRows } from '../../langgraph/test/helpers/sqlite-rows.js';
import { memoryTrip, sqliteTrip } from '../../langgraph/test/helpers/js-trip.js';
import { TRIP } from '../../langgraph/test/helpers/trip.js';
import { freshDatabase } from '../../sqlite/test/helpers/postgres.js';
import { COMMAND, git, json, revParseAll, run, tempDir } from './fixture.js';
import { start, until } from './processes.js';

// Each case runs the CLI a dozen times; a machine under load makes that slow.
vi.setConfig({ testTimeout: 600_000 });

const dir = tempDir('entity-git-cli-langgraph-');
const drops: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const drop of drops) await drop();
  rmSync(dir, { recursive: true, force: true });
});

const RECOGNISED = {
  sqlite:
    'entity-git: recognised the "langgraph" schema: LangGraph\'s SqliteSaver checkpoints (Python or LangGraph.js: checkpoints + writes; msgpack or JSON values); read as it is, never written\n',
  postgres:
    'entity-git: recognised the "langgraph" schema: LangGraph\'s PostgresSaver checkpoints (Python or LangGraph.js: checkpoints + checkpoint_blobs, a channel\'s value per version); read as it is, never written\n',
};

/** A store of checkpoints: its `--db`, and a hash of its rows. */
interface Store {
  db: string;
  engine: 'sqlite' | 'postgres';
  rows(): Promise<Record<string, string>>;
}

async function pythonStore(engine: 'sqlite' | 'postgres', name: string, specs: CheckpointSpec[]): Promise<Store> {
  if (engine === 'sqlite') {
    const db = join(dir, `${name}.sqlite`);
    writePythonSqlite(db, specs);
    return { db, engine, rows: async () => sqliteRows(db) };
  }
  const { url, drop } = await freshDatabase();
  drops.push(drop);
  await writePythonPostgres(url, specs);
  return { db: url, engine, rows: () => postgresRows(url) };
}

/** Each branch's commit messages, oldest first, and the files at its tip. */
function history(repo: string): Record<string, { messages: string[]; files: string[] }> {
  const out: Record<string, { messages: string[]; files: string[] }> = {};
  for (const branch of git(repo, 'for-each-ref', '--format=%(refname:short)', 'refs/heads').split('\n')) {
    out[branch] = {
      messages: git(repo, 'log', '--reverse', '--format=%B%x00', branch).split('\0\n').filter(Boolean),
      files: git(repo, 'ls-tree', '-r', '--name-only', branch).split('\n'),
    };
  }
  return out;
}

let expected: { tips: Record<string, string>; history: ReturnType<typeof history> };
let specs: CheckpointSpec[];

beforeAll(async () => {
  // The conversation as LangGraph.js writes it, mirrored through LangGraph.js's own saver.
  const js = await memoryTrip();
  const mirror = createNodeMirror({ dag: js.dag, root: join(dir, 'expected') });
  await mirror.sync(TRIP);
  expected = { tips: revParseAll(mirror.repoPath(TRIP)), history: history(mirror.repoPath(TRIP)) };
  specs = await pythonCopy(js.saver, TRIP);
});

/** sync, then every reading command, on `store`: the mirror's repository and what the commands said. */
async function mirrorThroughCli(store: Store, root: string, session: string) {
  const before = await store.rows();
  const eg = (...args: string[]) => run(['--db', store.db, '--root', root, ...args]);
  const synced = await eg('sync');
  expect(synced.stderr).toBe(RECOGNISED[store.engine]);
  expect(synced.code).toBe(0);
  expect(await store.rows()).toEqual(before);
  for (const args of [['verify'], ['log', session], ['show', session, '1'], ['branches', session], ['sync']]) {
    const r = await eg(...args);
    expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: RECOGNISED[store.engine] });
  }
  const asJson = json(await eg('sync', '--json'));
  expect([asJson.recognised, asJson.counts.unchanged, asJson.counts.failed]).toEqual(['langgraph', asJson.total, 0]);
  expect(json(await eg('log', session, '--json')).recognised).toBe('langgraph');
  expect(json(await eg('verify', '--json'))).toMatchObject({ ok: true, recognised: 'langgraph' });
  const repo = join(root, session);
  git(repo, 'fsck', '--strict');
  expect(git(repo, 'status', '--porcelain')).toBe('');
  expect(await store.rows()).toEqual(before);
  return { repo, synced };
}

describe('entity-git on LangGraph checkpoint stores, with no configuration', () => {
  it('the mirror of the conversation as LangGraph.js writes it: three branches, HEAD on the last time travel', () => {
    expect(Object.keys(expected.tips).sort()).toEqual(['HEAD', 'fork-h4', 'main', 'retry-a7']);
    expect(expected.tips.HEAD).toBe('retry-a7');
    expect(expected.history.main!.messages.map((m) => m.split('\n')[0])).toEqual([
      "turn 1: What's the weather in Oslo and Bergen?",
      'turn 2: And tomorrow in Oslo?',
      'turn 3: Thanks!',
    ]);
    expect(expected.history['fork-h4']!.messages.at(-1)!.split('\n')[0]).toBe('turn 2: What about Trondheim?');
    expect(expected.history['retry-a7']!.files).toEqual([
      'messages/000001-u-h1.json',
      'messages/000002-a-a1.json',
      'messages/000003-t-t-c1.json',
      'messages/000004-t-t-c2.json',
      'messages/000005-a-a2.json',
      'messages/000006-u-h2.json',
      'messages/000014-a-a7.json',
      'meta.json',
    ]);
  });

  for (const engine of ['sqlite', 'postgres'] as const) {
    it(`Python's ${engine} checkpoints (tool calls, an update_state fork, a run resumed from the past): the commits of the same conversation written by LangGraph.js`, async () => {
      const store = await pythonStore(engine, `trip-${engine}`, specs);
      const { repo, synced } = await mirrorThroughCli(store, join(dir, `root-${engine}`), TRIP);
      expect(synced.stdout).toBe('1/1 trip backfilled\nsynced 1 session: 1 backfilled, 0 failed\n');
      expect(revParseAll(repo)).toEqual(expected.tips);
      expect(history(repo)).toEqual(expected.history);
    });
  }

  it("LangGraph.js's SqliteSaver file, written by the real package: the same commits", async () => {
    const db = join(dir, 'js.sqlite');
    await sqliteTrip(db);
    const { repo } = await mirrorThroughCli(
      { db, engine: 'sqlite', rows: async () => sqliteRows(db) },
      join(dir, 'root-js'),
      TRIP,
    );
    expect(revParseAll(repo)).toEqual(expected.tips);
    expect(history(repo)).toEqual(expected.history);
  });

  for (const engine of ['sqlite', 'postgres'] as const) {
    it(`Python's ${engine} checkpoints with a value of an unknown type and the JSON fallback: kept, named, one warning`, async () => {
      const store = await pythonStore(engine, `odd-${engine}`, [...oddThread(), ...fallbackThread()]);
      const root = join(dir, `odd-root-${engine}`);
      const before = await store.rows();
      const r = await run(['--db', store.db, '--root', root, 'sync']);
      expect(r.code).toBe(0);
      // One warning for the type, though two threads and three checkpoints hold it; the other
      // unknown type sits in a channel that is not mirrored, and is not reported.
      expect(r.stderr).toBe(
        `${RECOGNISED[engine]}entity-git: warning: a value of Python type myapp.models.Weather cannot be read: kept as its data, its type in the node's metadata (python_types)\n`,
      );
      expect(r.stdout).toBe(
        '1/2 py-odd backfilled\n2/2 py-json backfilled\nsynced 2 sessions: 2 backfilled, 0 failed\n',
      );
      const odd = join(root, ODD);
      const file = (repo: string, name: string) => JSON.parse(git(repo, 'show', `main:messages/${name}`));
      expect(git(odd, 'ls-tree', '-r', '--name-only', 'main').split('\n')).toEqual([
        'messages/000001-u-h1.json',
        'messages/000002-a-a1.json',
        'messages/000003-t-t1.json',
        'messages/000004-a-a2.json',
        'meta.json',
      ]);
      const forecast = { python_type: 'myapp.models.Weather', value: { city: 'Oslo', temp: 18 } };
      expect(file(odd, '000002-a-a1.json')).toEqual({
        caller: null,
        content: 'Checking the weather.',
        created_at: 1767258004,
        id: 'a1',
        metadata: {
          // The standard library's types read as JSON: a datetime, a UUID, a set.
          additional_kwargs: {
            asked_at: '2026-01-01T09:00:00+00:00',
            cities: ['Oslo'],
            forecast,
            request: '01234567-89ab-cdef-0123-456789abcdef',
          },
          python_types: ['myapp.models.Weather'],
          tokens: 20,
          tool_calls: [{ args: { city: 'Oslo' }, id: 'c1', name: 'weather' }],
          type: 'ai',
          usage: { input_tokens: 12, output_tokens: 8, total_tokens: 20 },
        },
        predecessor: 'h1',
        role: 'assistant',
        seq: 2,
        session_id: ODD,
      });
      expect(file(odd, '000003-t-t1.json')).toMatchObject({
        caller: 'a1',
        predecessor: 'a1',
        role: 'tool',
        content: 'Sunny, 18 °C',
        metadata: { name: 'weather', tool: 'weather', tool_call_id: 'c1', type: 'tool' },
      });
      expect(git(odd, 'log', '--format=%B', 'main').trimEnd()).toBe(
        [
          'turn 1: Plan my day in Oslo.',
          '',
          'assistant: Sunny all day: walk to the fjord.',
          'tools: weather',
          '',
          '[meta: turn took 6.0s, 1 tool, 59 tokens]',
          '',
          'Session: py-odd',
          'Turn: 1',
          'Node: a2',
          'Seq: 4',
        ].join('\n'),
      );
      const fallback = join(root, FALLBACK);
      expect(file(fallback, '000002-a-ja1.json')).toEqual({
        caller: null,
        content: 'Sunny all day.',
        created_at: 1767258022,
        id: 'ja1',
        metadata: { additional_kwargs: { forecast }, python_types: ['myapp.models.Weather'], type: 'ai' },
        predecessor: 'jh1',
        role: 'assistant',
        seq: 2,
        session_id: FALLBACK,
      });
      for (const repo of [odd, fallback]) {
        git(repo, 'fsck', '--strict');
        expect(git(repo, 'status', '--porcelain')).toBe('');
      }
      expect(json(await run(['--db', store.db, '--root', root, 'verify', '--json']))).toMatchObject({ ok: true });
      expect(await store.rows()).toEqual(before);
    });
  }

  for (const engine of ['sqlite', 'postgres'] as const) {
    it(`watch on Python's ${engine} checkpoints as the app writes them: each checkpoint mirrored, the end equal to a fresh sync`, async () => {
      const steps = travelThread();
      const store = await pythonStore(engine, `watch-${engine}`, steps.slice(0, 2));
      const root = join(dir, `watch-root-${engine}`);
      const watch = start(COMMAND[0]!, [...COMMAND.slice(1), '--db', store.db, '--root', root, 'watch', '--json']);
      try {
        const events = () =>
          watch.out.map((l) => JSON.parse(l) as { event: string; sessionId?: string; commits?: number });
        await until(() => events().some((e) => e.event === 'committed'), 'the first turn', 400_000);
        expect(events()[0]).toEqual({
          event: 'watching',
          method: engine === 'sqlite' ? 'data_version' : 'polling',
          intervalMs: 100,
          recognised: 'langgraph',
        });
        // The app goes on: a second turn, an update_state fork, a run resumed from the past.
        const append = (more: CheckpointSpec[]) =>
          engine === 'sqlite'
            ? writePythonSqlite(store.db, more)
            : writePythonPostgres(store.db, more, { append: true });
        for (const n of [4, 6, 7]) {
          await append(steps.slice(n === 4 ? 2 : n === 6 ? 4 : 6, n));
          const branch = n === 4 ? 'main' : n === 6 ? 'fork-h3' : 'retry-a4';
          await until(
            () => {
              try {
                return git(join(root, TRAVEL), 'rev-parse', '--verify', '--quiet', branch) !== '';
              } catch {
                return false;
              }
            },
            branch,
            400_000,
          );
        }
        await until(
          () => git(join(root, TRAVEL), 'log', '-1', '--format=%s', 'main') === 'turn 2: Weather?',
          'turn 2',
          400_000,
        );
      } finally {
        watch.child.kill('SIGTERM');
      }
      expect(await watch.exit).toBe(0);
      expect(watch.out.at(-1)).toBe('{"event":"stopped"}');
      const fresh = join(dir, `watch-fresh-${engine}`);
      expect((await run(['--db', store.db, '--root', fresh, 'sync'])).code).toBe(0);
      expect(revParseAll(join(root, TRAVEL))).toEqual(revParseAll(join(fresh, TRAVEL)));
      expect(Object.keys(revParseAll(join(root, TRAVEL))).sort()).toEqual(['HEAD', 'fork-h3', 'main', 'retry-a4']);
      git(join(root, TRAVEL), 'fsck', '--strict');
    });
  }
});
