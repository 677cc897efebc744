// The CLI on the stores of applications it recognises with no configuration: it says which on
// stderr and in --json, and a watch following the application as it writes, in another
// process, ends with the ids of a fresh backfill.
import { rmSync } from 'node:fs';
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
    const child = join(REPO_ROOT, 'packages', 'sqlite', 'test', 'app-databases', 'fixtures', 'agents-writer-child.ts');
    const writer = start(process.execPath, ['--import', 'tsx', child, db, '5']);
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
