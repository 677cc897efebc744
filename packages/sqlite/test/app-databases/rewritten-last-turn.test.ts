// A turn an application writes again after its rows already read as complete: the mirror that
// committed it in between (a live `entity-git watch`) reads its path's last turn again at the
// next sync and ends on the commit a fresh backfill of the final store makes. The interleaving
// is driven step by step on a real SQLite file and a real PostgreSQL database: no timing luck.
import { join } from 'node:path';
import { createNodeMirror } from '@entity-git/node-fs';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { type SqlStore, openPostgres, openSqlite } from '../../src/index.js';
import { freshDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';
import { type Step, liveStart, opencodeSteps, webuiMessagesSteps } from './fixtures/app-writes.js';
import { pgExec } from './fixtures/recognised-postgres.js';
import { OPENCODE_MESSAGES, make } from './fixtures/recognised-stores.js';
import { git } from './repo-facts.js';

const tmp = tempDir('entity-git-app-rewritten-');
const drops: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const drop of drops) await drop();
  tmp.remove();
});

/** The store as of `store`: its session mirrored into a fresh root, and the refs native git reads. */
async function backfillRefs(store: SqlStore, sessionId: string, name: string): Promise<string> {
  const root = join(tmp.dir, name);
  await createNodeMirror({ dag: store.dag, root }).sync(sessionId);
  return git(join(root, sessionId), 'rev-parse', 'main');
}

/**
 * Syncs `sessionId` once with every step but the last written, then once more after the last:
 * the second sync's result, and the repository's main against a fresh backfill's.
 */
async function syncAcrossLastStep(o: {
  store: SqlStore;
  sessionId: string;
  name: string;
  run: (step: Step) => Promise<void>;
  steps: Step[];
  turnsBefore: number;
}) {
  const { store, sessionId, name, run, steps } = o;
  for (const step of steps.slice(0, -1)) await run(step);
  const root = join(tmp.dir, `${name}-live`);
  const mirror = createNodeMirror({ dag: store.dag, root });
  const first = await mirror.sync(sessionId);
  expect(first.commitsWritten).toBe(o.turnsBefore); // every turn already reads as complete
  const repo = join(root, sessionId);
  const early = git(repo, 'rev-parse', 'main');
  await run(steps.at(-1)!);
  const second = await mirror.sync(sessionId);
  const reference = await backfillRefs(store, sessionId, `${name}-backfill`);
  expect(reference).not.toBe(early); // the last step changed a committed turn's bytes
  git(repo, 'fsck', '--strict');
  expect(git(repo, 'status', '--porcelain')).toBe('');
  return { second, early, repo, main: git(repo, 'rev-parse', 'main'), reference };
}

describe('a turn its application writes again after it read as complete', () => {
  it('OpenCode on SQLite: an error reply completed after its error row was committed moves main to the backfill commit', async () => {
    const file = join(tmp.dir, 'opencode.sqlite');
    make(file, liveStart('opencode', 'sqlite'));
    const writer = new Database(file);
    // Its last step completes the last reply: `time.completed` written after the `error` that
    // already closed the turn (the writes the live watch raced with).
    const steps = opencodeSteps(OPENCODE_MESSAGES.slice(0, -1));
    expect(steps.at(-1)![0]).toMatch(/^update message set data/);
    const store = await openSqlite({ file, quietMs: Number.POSITIVE_INFINITY });
    try {
      const r = await syncAcrossLastStep({
        store,
        sessionId: 'ses_1',
        name: 'opencode',
        run: async ([text, params]) => void writer.prepare(text.replace(/\$\d+/g, '?')).run(...params),
        steps,
        turnsBefore: 2,
      });
      expect(r.second).toMatchObject({ commitsWritten: 1, branchesMoved: ['main'] });
      expect(r.main).toBe(r.reference);
      expect(git(r.repo, 'rev-list', '--count', '--first-parent', 'main')).toBe('2');
      // The commit made before the last row stays in the reflog only.
      expect(git(r.repo, 'reflog', '--format=%H', 'main').split('\n')).toContain(r.early);
      const message = JSON.parse(git(r.repo, 'show', 'main:messages/000005-a-msg_000000000005.json'));
      expect(message.metadata.row.data.time.completed).toBe(
        (OPENCODE_MESSAGES[4]!.data.time as { completed: number }).completed,
      );
    } finally {
      await store.close();
      writer.close();
    }
  });

  it('Open WebUI (chat_message) on PostgreSQL: a finished reply edited in place moves main to the backfill commit', async () => {
    const { url, drop } = await freshDatabase();
    drops.push(drop);
    await pgExec(url, ["set time zone 'UTC'", ...liveStart('open-webui-messages', 'postgres')]);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    // Open WebUI saves an edit of a reply over its row: the reply finished, then its text rewritten.
    const edit: Step = [
      'update chat_message set content = $1, output = $2 where id = $3',
      [
        JSON.stringify('Snow, then rain.'),
        JSON.stringify([
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Snow, then rain.' }] },
        ]),
        'w2-b4',
      ],
    ];
    const store = await openPostgres({ connectionString: url, quietMs: Number.POSITIVE_INFINITY });
    try {
      const r = await syncAcrossLastStep({
        store,
        sessionId: 'w2',
        name: 'webui-pg',
        run: async ([text, params]) => void (await client.query(text, params)),
        steps: [...webuiMessagesSteps(), edit],
        turnsBefore: 2,
      });
      expect(r.second).toMatchObject({ commitsWritten: 1, branchesMoved: ['main'] });
      expect(r.main).toBe(r.reference);
      expect(git(r.repo, 'rev-list', '--count', '--first-parent', 'main')).toBe('2');
      expect(git(r.repo, 'reflog', '--format=%H', 'main').split('\n')).toContain(r.early);
    } finally {
      await store.close();
      await client.end();
    }
  });
});
