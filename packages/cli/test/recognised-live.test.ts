// `entity-git watch` on each recognised store while another process writes it as the application
// does (row by row, parts and chat JSON rewritten in place), on SQLite and, for the applications
// that run there, on PostgreSQL: the watch ends with the commits of a fresh backfill of the final
// store, native git finds them whole, and no row of the store is written.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { liveStart } from '../../sqlite/test/app-databases/fixtures/app-writes.js';
import { pgExec } from '../../sqlite/test/app-databases/fixtures/recognised-postgres.js';
import { make } from '../../sqlite/test/app-databases/fixtures/recognised-stores.js';
import { tablesHash } from '../../sqlite/test/app-databases/fixtures/table-hash.js';
import { pgSnapshot } from '../../sqlite/test/helpers/pg-snapshot.js';
import { freshDatabase } from '../../sqlite/test/helpers/postgres.js';
import { COMMAND, REPO_ROOT, git, json, revParseAll, run, tempDir } from './fixture.js';
import { start, until } from './processes.js';

const dir = tempDir('entity-git-cli-live-');
const drops: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const drop of drops) await drop();
  rmSync(dir, { recursive: true, force: true });
});

const CHILD = join(REPO_ROOT, 'packages', 'sqlite', 'test', 'app-databases', 'fixtures', 'app-writer-child.ts');

/** What native git shows at the end, per session: HEAD's branch and each branch's commits. */
type Expected = Record<string, { head: string; commits: Record<string, number> }>;

const EXPECTED: Record<string, Expected> = {
  'openai-agents': {
    conv_1: { head: 'main', commits: { main: 2 } },
    conv_3: { head: 'main', commits: { main: 2 } },
  },
  opencode: {
    ses_1: { head: 'main', commits: { main: 2 } },
  },
  'open-webui': {
    w1: { head: 'fork-w1-m6', commits: { 'fork-w1-m6': 2, main: 2, 'retry-w1-m3': 1 } },
  },
  'open-webui-messages': {
    w2: { head: 'main', commits: { main: 2 } },
  },
};

async function makeStore(store: string, engine: 'sqlite' | 'postgres') {
  if (engine === 'sqlite') {
    const db = join(dir, `${store}.sqlite`);
    make(db, liveStart(store, engine));
    return { db, rows: async () => tablesHash(db) };
  }
  const { url, drop } = await freshDatabase();
  drops.push(drop);
  await pgExec(url, ["set time zone 'UTC'", ...liveStart(store, engine)]);
  return { db: url, rows: () => pgSnapshot(url) };
}

const CASES: [string, 'sqlite' | 'postgres'][] = [
  ['opencode', 'sqlite'],
  ['open-webui', 'sqlite'],
  ['open-webui-messages', 'sqlite'],
  ['openai-agents', 'postgres'],
  ['open-webui', 'postgres'],
  ['open-webui-messages', 'postgres'],
];

describe('entity-git watch on a recognised store its application writes in another process', () => {
  for (const [store, engine] of CASES) {
    it(`${store} on ${engine}: every finished turn committed, the ids of a fresh backfill, no row written`, async () => {
      const { db, rows } = await makeStore(store, engine);
      const root = join(dir, `${store}-${engine}-watch`);
      const watch = start(COMMAND[0]!, [
        ...[...COMMAND.slice(1), '--db', db, '--root', root],
        ...['watch', '--interval', '20', '--quiet-time', '100000h', '--json'],
      ]);
      await until(() => watch.out.some((l) => l.includes('"watching"')), 'the watch to start', 400_000);
      expect(JSON.parse(watch.out.find((l) => l.includes('"watching"'))!)).toMatchObject({ recognised: store });
      const writer = start(process.execPath, ['--import', 'tsx', CHILD, store, engine, db, '5']);
      expect(await writer.exit).toBe(0);
      expect(writer.out.at(-1)).toBe('done');
      const written = await rows();

      const reference = join(dir, `${store}-${engine}-reference`);
      const synced = json(await run(['--db', db, '--root', reference, 'sync', '--json']));
      const ids = Object.keys(EXPECTED[store]!);
      expect(
        synced.sessions
          .filter((s: { action: string }) => s.action === 'backfilled')
          .map((s: { sessionId: string }) => s.sessionId)
          .sort(),
      ).toEqual(ids);
      const expected = Object.fromEntries(ids.map((id) => [id, revParseAll(join(reference, id))]));
      const refsOf = (id: string) => {
        try {
          return JSON.stringify(revParseAll(join(root, id)));
        } catch (err) {
          return String(err);
        }
      };
      const same = (id: string) => refsOf(id) === JSON.stringify(expected[id]);
      // A watch that stopped, or one still short of the last row at the bound, says what it did.
      const report = () =>
        [
          `the watch ${watch.child.exitCode === null ? 'runs' : `exited ${watch.child.exitCode}`}; its last lines:`,
          ...watch.out.slice(-12),
          `stderr: ${watch.err.join('').slice(-3000)}`,
          ...ids.map((id) => `${id}: ${refsOf(id)}, a fresh backfill ${JSON.stringify(expected[id])}`),
        ].join('\n');
      await until(
        () => watch.child.exitCode !== null || ids.every(same),
        'the watch to mirror the last row',
        400_000,
      ).catch((err: Error) => {
        throw new Error(`${err.message}\n${report()}`);
      });
      expect(watch.child.exitCode, report()).toBeNull();
      watch.child.kill('SIGTERM');
      expect(await watch.exit).toBe(0);

      for (const [id, facts] of Object.entries(EXPECTED[store]!)) {
        const repo = join(root, id);
        expect(git(repo, 'symbolic-ref', '--short', 'HEAD')).toBe(facts.head);
        const branches = git(repo, 'for-each-ref', '--format=%(refname:short)', 'refs/heads').split('\n');
        expect(
          Object.fromEntries(branches.map((b) => [b, Number(git(repo, 'rev-list', '--count', '--first-parent', b))])),
        ).toEqual(facts.commits);
        git(repo, 'fsck', '--strict');
        expect(git(repo, 'status', '--porcelain')).toBe('');
      }
      expect(await rows()).toBe(written);
    }, 600_000);
  }
});
