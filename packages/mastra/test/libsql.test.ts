import { join } from 'node:path';
import { createNodeMirror } from '@entity-git/node-fs';
import { LibSQLStore } from '@mastra/libsql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MASTRA_SQLITE_NAME, openMastraSqlite, type MastraStore } from '../src/index.js';
import { expectedDag } from './helpers/expected-dag.js';
import { expectConversationRepos } from './helpers/expectations.js';
import { cleanupDirs, git, judged, refs, tempDir, tree } from './helpers/git.js';
import { haveConversations, scriptedAgent, turn } from './helpers/mastra-agent.js';
import { sqliteTableHashes } from './helpers/table-hashes.js';

afterAll(cleanupDirs);

describe('Mastra on libSQL (a local file), mirrored', () => {
  const dir = tempDir();
  const file = join(dir, 'mastra.db');
  const storage = new LibSQLStore({ url: `file:${file}` });
  const setup = scriptedAgent(storage);
  let store: MastraStore;

  beforeAll(async () => {
    await haveConversations(setup);
    store = await openMastraSqlite({ file: `file:${file}` });
  });
  afterAll(() => store?.close());

  it('gives one repository per thread, as native git reads it, and writes nothing to the database', async () => {
    const before = sqliteTableHashes(file);
    expect(Object.keys(before)).toEqual(expect.arrayContaining(['mastra_messages', 'mastra_threads']));
    expect(store.name).toBe(MASTRA_SQLITE_NAME);
    expect(await store.dag.listSessions()).toEqual(['trip', 'notes']);
    expect(await store.dag.getSession('trip')).toEqual({
      id: 'trip',
      title: 'Weather for the trip',
      agent_id: 'mastra',
      model: null,
      project_id: null,
      head: null,
      created_at: (await storage.getThreadById({ threadId: 'trip' }))!.createdAt.getTime() / 1000,
      metadata: { resourceId: 'user-1', metadata: { topic: 'travel', priority: 2 } },
    });
    const root = tempDir();
    const mirror = createNodeMirror({ dag: store.dag, root });
    for (const id of await store.dag.listSessions()) await mirror.sync(id);
    await expectConversationRepos(storage, (id) => mirror.repoPath(id));
    // The session row, as the meta ref shows it.
    expect(JSON.parse(git(mirror.repoPath('trip'), 'show', 'refs/entity-git/meta:session.json'))).toMatchObject({
      title: 'Weather for the trip',
      metadata: { resourceId: 'user-1', metadata: { topic: 'travel', priority: 2 } },
    });
    expect(sqliteTableHashes(file)).toEqual(before);

    // The commit ids are those of the DAG the mapping gives, written from Mastra's own API.
    const expected = await expectedDag(storage, ['trip', 'notes']);
    const other = createNodeMirror({ dag: expected, root: tempDir() });
    for (const id of ['trip', 'notes']) {
      await other.sync(id);
      expect(refs(mirror.repoPath(id))).toEqual(refs(other.repoPath(id)));
    }
  });

  it('live: another turn, synced again, equals a fresh backfill in another root (main only moves forward)', async () => {
    const root = tempDir();
    const mirror = createNodeMirror({ dag: store.dag, root });
    await mirror.sync('trip');
    const before = refs(mirror.repoPath('trip')).main!;
    await turn(setup, 'trip', 'Read the trip note');
    const result = await mirror.sync('trip');
    expect(result.commitsWritten).toBe(1);
    const after = refs(mirror.repoPath('trip'));
    expect(git(mirror.repoPath('trip'), 'rev-parse', 'main~1').trim()).toBe(before);
    expect(git(mirror.repoPath('trip'), 'log', '-1', '--format=%s', 'main').trim()).toBe('turn 3: Read the trip note');
    expect((await mirror.sync('trip')).noop).toBe(true);

    const fresh = createNodeMirror({ dag: store.dag, root: tempDir() });
    await fresh.sync('trip');
    expect(refs(fresh.repoPath('trip'))).toEqual(after);
    expect(judged(mirror.repoPath('trip'))).toEqual({ fsck: '', status: '' });
  });

  it('a thread id unsafe as a path is escaped: nothing is written outside the root', async () => {
    for (const threadId of ['../x', 'a/b', '.git']) {
      await setup.memory.createThread({ threadId, resourceId: 'user-1', title: threadId });
      await turn(setup, threadId, 'And tomorrow?');
    }
    const parent = tempDir();
    const root = join(parent, 'sessions');
    const mirror = createNodeMirror({ dag: store.dag, root });
    for (const threadId of ['../x', 'a/b', '.git']) {
      await mirror.sync(threadId);
      const repo = mirror.repoPath(threadId);
      expect(repo.startsWith(`${root}/`)).toBe(true);
      expect(repo.slice(root.length + 1)).not.toMatch(/\/|^\.\.?$|^\.git$/);
      expect(git(repo, 'log', '-1', '--format=%B', 'main')).toContain(`Session: `);
      expect(judged(repo)).toEqual({ fsck: '', status: '' });
    }
    expect(tree(parent).filter((p) => !p.startsWith('sessions'))).toEqual([]);
    expect(tree(root).filter((p) => !p.includes('/')).length).toBe(3);
  });
});
