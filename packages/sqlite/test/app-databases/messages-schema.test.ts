import { join } from 'node:path';
import { canonicalJson } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { KNOWN_SCHEMAS, openSqlite } from '../../src/index.js';
import { tempDir } from '../helpers/temp.js';
import { MESSAGES_STEPS, MessagesApp, T0, messagesScenario } from './fixtures/messages-db.js';
import { tablesHash } from './fixtures/table-hash.js';
import { assertHealthy, backfill, git, refsOf, repoFacts } from './repo-facts.js';

const tmp = tempDir('entity-git-app-messages-');
afterAll(() => tmp.remove());

const file = join(tmp.dir, 'sessions.sqlite');
const app = new MessagesApp(file, { create: true });
messagesScenario(app);
app.close();

const turn1 = [
  'turn 1: List the files and read the README',
  '',
  'assistant: There are two files; the README says hello.',
  'tools: list, read',
  '',
  '[meta: turn took 5.0s, 2 tools, 1280 tokens]',
  '',
  'Session: s1',
  'Turn: 1',
  'Node: a1',
  'Seq: 2',
].join('\n');
const msg = (subject: string, body: string[], meta: string, node: string, seq: number, turn = 2) =>
  [
    subject,
    '',
    ...body,
    ...(body.length ? [''] : []),
    meta,
    '',
    'Session: s1',
    `Turn: ${turn}`,
    `Node: ${node}`,
    `Seq: ${seq}`,
  ].join('\n');

describe('the "messages" schema, with no configuration', () => {
  it('is recognised, mirrored in the layout of the design, and left byte for byte as it was', async () => {
    const before = tablesHash(file);
    const store = await openSqlite({ file });
    expect(store.recognised).toBe('messages');
    expect(await store.dag.listSessions()).toEqual(['s1', 's2']);
    expect(await store.dag.getSession('s1')).toEqual({
      id: 's1',
      title: 'Files of the site',
      agent_id: 'main',
      model: 'acme-large',
      project_id: 'proj-1',
      head: 'a2e',
      created_at: T0,
      metadata: { project_id: 'proj-1', cwd: '/work/site' },
    });
    const root = join(tmp.dir, 'backfill');
    await backfill(store.dag, root);
    const repo = join(root, 's1');
    assertHealthy(repo);
    const facts = repoFacts(repo);
    expect(facts.head).toBe('fork-u2e');
    const files = (...names: string[]) => [
      'messages/000001-u-u1.json',
      'messages/000002-a-a1.json',
      ...names.map((n) => `messages/${n}.json`),
      'meta.json',
    ];
    expect(Object.keys(facts.branches).sort()).toEqual(['fork-u2e', 'main', 'retry-a2b']);
    expect(facts.branches.main!.files).toEqual(files('000003-u-u2', '000004-a-a2'));
    expect(facts.branches['retry-a2b']!.files).toEqual(
      files('000003-u-u2', '000005-a-a2b', '000006-u-u3', '000007-s-s3'),
    );
    expect(facts.branches['fork-u2e']!.files).toEqual(files('000008-u-u2e', '000009-a-a2e'));
    expect(facts.branches.main!.messages).toEqual([
      turn1,
      msg(
        'turn 2: Summarise site.ts',
        ['assistant: It prints hello.', 'tools: read × 2'],
        '[meta: turn took 10.0s, 2 tools, 1520 tokens]',
        'a2',
        4,
      ),
    ]);
    expect(facts.branches['retry-a2b']!.messages).toEqual([
      turn1,
      msg(
        'turn 2: Summarise site.ts',
        ['assistant: site.ts logs "hello" once.'],
        '[meta: turn took 60.0s, 1525 tokens]',
        'a2b',
        5,
      ),
      msg('turn 3: Now deploy it', [], '[meta: turn took 1.0s]', 's3', 7, 3),
    ]);
    expect(facts.branches['fork-u2e']!.messages).toEqual([
      turn1,
      msg(
        'turn 2: Summarise site.ts in French',
        ['assistant: Il affiche bonjour.'],
        '[meta: turn took 10.0s, 1415 tokens]',
        'a2e',
        9,
      ),
    ]);
    // One file per row: the role and every other column kept, the content stored once.
    expect(`${git(repo, 'show', 'main:messages/000002-a-a1.json')}\n`).toBe(
      canonicalJson({
        id: 'a1',
        session_id: 's1',
        seq: 2,
        role: 'assistant',
        content: 'There are two files; the README says hello.',
        predecessor: 'u1',
        caller: null,
        created_at: T0 + 5,
        metadata: {
          inline_tools: ['list', 'read'],
          tokens: 1280,
          row: {
            role: 'assistant',
            source: 'agent',
            extra: {
              model: 'acme-large',
              provider: 'acme',
              tool_calls: [
                {
                  id: 'a1-call-0',
                  tool_call_id: 'toolu_a1_0',
                  tool: 'list',
                  input: { path: '.' },
                  result: 'README.md\nsite.ts',
                  is_error: false,
                },
                {
                  id: 'a1-call-1',
                  tool_call_id: 'toolu_a1_1',
                  tool: 'read',
                  input: { path: 'README.md' },
                  result: 'hello',
                  is_error: false,
                },
              ],
              blocks: [{ type: 'text', text: 'There are two files; the README says hello.' }],
            },
            input_tokens: 1200,
            output_tokens: 80,
            cache_read_tokens: 0,
            token_source: 'provider',
            token_model: 'acme-large',
          },
        },
      }),
    );
    expect(JSON.parse(git(repo, 'show', 'refs/entity-git/meta:session.json'))).toMatchObject({
      title: 'Files of the site',
      project_id: 'proj-1',
    });
    expect(repoFacts(join(root, 's2')).branches.main!.commits).toBe(1);
    // Read-only: the store refuses to write, and so does the connection under it.
    await expect(
      store.writer.appendNode({ id: 'x', session_id: 's1', role: 'user', content: 'x' }),
    ).rejects.toMatchObject({
      code: 'INVALID_OPTION',
    });
    await expect(sql`create table entity_git_probe (a)`.execute(store.db)).rejects.toMatchObject({
      code: 'SQLITE_READONLY',
    });
    for (const id of ['s1', 's2']) expect((await createNodeMirror({ dag: store.dag, root }).verify(id)).ok).toBe(true);
    await store.close();
    expect(tablesHash(file)).toBe(before);
  });

  it('live, one step of the dispatcher at a time, commits each turn once and ends where a fresh backfill does', async () => {
    const reference = join(tmp.dir, 'reference');
    const ref = await openSqlite({ file });
    await backfill(ref.dag, reference);
    await ref.close();

    const live = join(tmp.dir, 'live.sqlite');
    const writer = new MessagesApp(live, { create: true });
    const root = join(tmp.dir, 'live');
    for (const [i, step] of MESSAGES_STEPS.entries()) {
      step(writer);
      // The dispatcher writes as the test syncs: its rows, dated in the past, are not quiet.
      const store = await openSqlite({ file: live, quietMs: Number.POSITIVE_INFINITY });
      const mirror = createNodeMirror({ dag: store.dag, root });
      for (const id of await store.dag.listSessions()) await mirror.sync(id);
      if (i === 1) expect(git(join(root, 's1'), 'for-each-ref', 'refs/heads')).toBe(''); // a prompt with no reply yet
      await store.close();
    }
    for (const id of ['s1', 's2']) {
      expect(refsOf(join(root, id))).toEqual(refsOf(join(reference, id)));
      assertHealthy(join(root, id));
      // Every move of every branch went forward: no turn was committed before it was complete.
      for (const branch of Object.keys(repoFacts(join(root, id)).branches)) {
        for (const entry of git(join(root, id), 'reflog', '--format=%H', branch).split('\n'))
          git(join(root, id), 'merge-base', '--is-ancestor', entry, branch);
      }
    }

    // The head moved to an older row: HEAD follows, and the working tree with it.
    writer.head('s1', 's3', 400);
    const store = await openSqlite({ file: live });
    const result = await createNodeMirror({ dag: store.dag, root }).sync('s1');
    expect(result.head).toBe('retry-a2b');
    expect(git(join(root, 's1'), 'symbolic-ref', '--short', 'HEAD')).toBe('retry-a2b');
    assertHealthy(join(root, 's1'));
    await store.close();
    writer.close();
  });

  it('reads the same through the mapping the schema amounts to, given as configuration', async () => {
    const known = KNOWN_SCHEMAS.find((k) => k.name === 'messages')!;
    const store = await openSqlite({ file, mapping: known.mapping });
    expect(store.recognised).toBeNull();
    expect((store.mapping?.nodes as { seq?: unknown } | undefined)?.seq).toEqual({ kind: 'rank', column: 'timestamp' });
    const root = join(tmp.dir, 'configured');
    await backfill(store.dag, root);
    await store.close();
    for (const id of ['s1', 's2']) expect(refsOf(join(root, id))).toEqual(refsOf(join(tmp.dir, 'backfill', id)));
  });
});
