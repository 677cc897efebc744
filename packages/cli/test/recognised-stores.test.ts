// The CLI on the stores of applications it recognises with no configuration: it says which on
// stderr and in --json, and a watch following the application as it writes, in another
// process, ends with the ids of a fresh backfill.
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentsSdkDb, opencodeDb, openWebuiDb } from '../../sqlite/test/app-databases/fixtures/recognised-stores.js';
import { tablesHash } from '../../sqlite/test/app-databases/fixtures/table-hash.js';
import { COMMAND, REPO_ROOT, git, json, revParseAll, run, tempDir } from './fixture.js';
import { start, until } from './processes.js';

const dir = tempDir('entity-git-cli-stores-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('entity-git on a recognised application store', () => {
  for (const [schema, make, description, sessions] of [
    [
      'openai-agents',
      agentsSdkDb,
      'OpenAI Agents SDK SQLiteSession (agent_sessions + agent_messages, one Responses item a row)',
      { conv_1: 'backfilled', conv_2: 'empty' },
    ],
    [
      'opencode',
      opencodeDb,
      'OpenCode opencode.db (session + message + part, JSON data, times in ms)',
      { ses_1: 'backfilled', ses_2: 'backfilled' },
    ],
    [
      'open-webui',
      openWebuiDb,
      'Open WebUI chat table (one JSON message tree per chat, history.currentId the head)',
      { w1: 'backfilled', w0: 'empty' },
    ],
  ] as const) {
    it(`says it read ${schema} on stderr and in --json, reports empty sessions, and changes no row`, async () => {
      const db = join(dir, `${schema}.sqlite`);
      make(db);
      const hash = tablesHash(db);
      const root = join(dir, `${schema}-root`);
      const synced = await run(['--db', db, '--root', root, 'sync']);
      expect(synced.code).toBe(0);
      expect(synced.stderr).toBe(
        `entity-git: recognised the "${schema}" schema: ${description}; read as it is, never written\n`,
      );
      const empties = Object.values(sessions).filter((a) => a === 'empty').length;
      expect(synced.stdout.trim().split('\n').at(-1)).toBe(
        `synced 2 sessions: ${2 - empties} backfilled${empties ? `, ${empties} empty` : ''}, 0 failed`,
      );
      const again = json(await run(['--db', db, '--root', join(dir, `${schema}-json`), 'sync', '--json']));
      expect(again.recognised).toBe(schema);
      expect(
        Object.fromEntries(again.sessions.map((s: { sessionId: string; action: string }) => [s.sessionId, s.action])),
      ).toEqual(sessions);
      expect((await run(['--db', db, '--root', root, 'verify'])).code).toBe(0);
      expect(tablesHash(db)).toBe(hash);
    }, 120_000);
  }
});

describe('entity-git watch on an Agents SDK session its application writes in another process', () => {
  it('ends with the ids of a fresh backfill of the final database', async () => {
    const db = join(dir, 'agents-live.sqlite');
    agentsSdkDb(db, []);
    const root = join(dir, 'agents-live-root');
    const watch = start(COMMAND[0]!, [
      ...COMMAND.slice(1),
      '--db',
      db,
      '--root',
      root,
      'watch',
      '--interval',
      '20',
      '--quiet-time',
      '100000h',
      '--json',
    ]);
    await until(() => watch.out.some((l) => l.includes('"watching"')), 'the watch to start', 400_000);
    expect(JSON.parse(watch.out.find((l) => l.includes('"watching"'))!)).toMatchObject({ recognised: 'openai-agents' });
    const child = join(REPO_ROOT, 'packages', 'sqlite', 'test', 'app-databases', 'fixtures', 'app-writer-child.ts');
    const writer = start(process.execPath, ['--import', 'tsx', child, 'openai-agents', 'sqlite', db, '5']);
    expect(await writer.exit).toBe(0);
    expect(writer.out.at(-1)).toBe('done');
    const reference = join(dir, 'agents-live-reference');
    expect((await run(['--db', db, '--root', reference, 'sync'])).code).toBe(0);
    const ids = ['conv_1', 'conv_3'];
    const expected = Object.fromEntries(ids.map((id) => [id, revParseAll(join(reference, id))]));
    await until(
      () =>
        ids.every((id) => {
          try {
            return JSON.stringify(revParseAll(join(root, id))) === JSON.stringify(expected[id]);
          } catch {
            return false;
          }
        }),
      'the watch to mirror the last item',
      400_000,
    );
    watch.child.kill('SIGTERM');
    expect(await watch.exit).toBe(0);
    for (const id of ids) {
      expect(Object.keys(expected[id]!).sort()).toEqual(['HEAD', 'main']);
      expect(git(join(root, id), 'rev-list', '--count', 'main')).toBe('2');
      git(join(root, id), 'fsck', '--strict');
    }
  }, 600_000);
});

describe('entity-git sync --dry-run', () => {
  it('says how the database is read, its sessions, one session in turn and branch terms, and the problems; writes nothing', async () => {
    const db = join(dir, 'dry-webui.sqlite');
    openWebuiDb(db);
    const root = join(dir, 'dry-root');
    const r = await run(['--db', db, '--root', root, 'sync', '--dry-run', '--json']);
    expect(r.code).toBe(0);
    const out = json(r);
    expect(out.recognised).toBe('open-webui');
    expect(out.sessions).toEqual([
      { id: 'w1', nodes: 8 },
      { id: 'w0', nodes: 0 },
    ]);
    expect(out.session.head).toBe('fork-w1-m6');
    expect(
      out.session.nodes.map((n: { id: string; turn: number; branches: string[] }) => [n.id, n.turn, n.branches]),
    ).toEqual([
      ['w1-m1', 1, ['main', 'retry-w1-m3', 'fork-w1-m6']],
      ['w1-m2', 1, ['main', 'fork-w1-m6']],
      ['w1-m3', 1, ['retry-w1-m3']],
      ['w1-m4', 2, ['main']],
      ['w1-m5', 2, ['main']],
      ['w1-m6', 2, ['fork-w1-m6']],
      ['w1-m7', 2, ['fork-w1-m6']],
      ['w1-m8', 3, ['fork-w1-m6']],
    ]);
    expect(out.session.problems).toEqual([]);
    expect(existsSync(root)).toBe(false);

    const agents = join(dir, 'dry-agents.sqlite');
    agentsSdkDb(agents);
    const open = json(
      await run(['--db', agents, '--root', root, 'sync', '--dry-run', '--json', '--quiet-time', '100000h']),
    );
    expect(open.session.problems.map((p: { kind: string; nodeId: string }) => [p.kind, p.nodeId])).toEqual([
      ['open-turn', '10'],
    ]);
    const text = await run(['--db', agents, '--root', root, 'sync', '--dry-run', '--quiet-time', '100000h']);
    expect(text.stdout).toContain('open-turn 10: branch main, turn 3: not committed yet: 10 (user) is open');
    expect(existsSync(root)).toBe(false);
  }, 120_000);

  it('names several roots in what a mapping reads as linear', async () => {
    const db = join(dir, 'dry-roots.sqlite');
    const raw = new Database(db);
    raw.exec(`create table chats (id text primary key, created integer);
      create table lines (id integer primary key, chat text, who text, body text, at integer);
      insert into chats values ('c1', 1779500000);
      insert into lines (chat, who, body, at) values ('c1', 'user', 'Hi', 1779500001), ('c1', 'assistant', 'Hello', 1779500002);`);
    raw.close();
    const config = join(dir, 'dry-roots.json');
    writeFileSync(
      config,
      JSON.stringify({
        mapping: {
          sessions: { table: 'chats', id: 'id', created_at: 'created' },
          nodes: {
            table: 'lines',
            id: 'id',
            session_id: 'chat',
            seq: 'id',
            role: 'who',
            content: 'body',
            predecessor: null,
            created_at: 'at',
          },
        },
      }),
    );
    const out = json(
      await run(['--db', db, '--config', config, '--root', join(dir, 'none'), 'sync', '--dry-run', '--json']),
    );
    expect(out.session.problems.map((p: { kind: string }) => p.kind)).toEqual(['several-roots']);
    expect(out.session.nodes.map((n: { branches: string[] }) => n.branches)).toEqual([['main'], ['retry-2']]);
  }, 120_000);
});
