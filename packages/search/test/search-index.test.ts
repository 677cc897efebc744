import { MemoryDag, createMirrorService } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { writeGolden } from '@entity-git/test-utils';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { git, indexOpener, placeOf, tempDir, turnCommit } from './helpers.js';

const indexOf = indexOpener();

async function goldenRoot() {
  const dag = new MemoryDag();
  await writeGolden(dag, { sessionId: 'golden-1' });
  await writeGolden(dag, { sessionId: 'golden-2' });
  await dag.createSession({ id: 'other', created_at: 1779500000 });
  await dag.addNode({
    id: 'o1',
    session_id: 'other',
    seq: 1,
    role: 'user',
    content: 'Where is the TODO list kept?',
    predecessor: null,
    caller: null,
    created_at: 1779500001,
    metadata: null,
  });
  await dag.addNode({
    id: 'o2',
    session_id: 'other',
    seq: 2,
    role: 'assistant',
    content: 'In docs/todo.md, café.',
    predecessor: 'o1',
    caller: null,
    created_at: 1779500002,
    metadata: null,
  });
  const root = tempDir();
  const mirror = createNodeMirror({ dag, root });
  const index = indexOf(root);
  for (const s of ['golden-1', 'golden-2', 'other']) {
    await mirror.sync(s);
    await index.update(s);
  }
  return { dag, root, mirror, index };
}

const TODO_EVERY_BRANCH = (s: string) => [
  `${s}/t2 tool fork-u4#1 [fork-u2e,fork-u4,main,retry-a4r]`,
  `${s}/u2 user main#2 [main,retry-a4r]`,
  `${s}/t3 tool main#2 [main,retry-a4r]`,
  `${s}/t4 tool main#2 [main,retry-a4r]`,
  `${s}/t5 tool main#2 [main,retry-a4r]`,
  `${s}/a4r assistant retry-a4r#2 [retry-a4r]`,
];
const sorted = (xs: string[]) => [...xs].sort();

describe('search over every session', () => {
  it('finds exactly the messages holding every word, once each, on HEAD, one branch or every branch', async () => {
    const { root, index } = await goldenRoot();
    // HEAD of the golden sessions is fork-u4: of the TODO messages only t2 (turn 1) is on it.
    const onHead = await index.search({ text: 'todo', limit: 100 });
    expect(sorted(onHead.hits.map(placeOf))).toEqual(
      sorted([
        'golden-1/t2 tool fork-u4#1 [fork-u4]',
        'golden-2/t2 tool fork-u4#1 [fork-u4]',
        'other/o1 user main#1 [main]',
        'other/o2 assistant main#1 [main]',
      ]),
    );
    const every = await index.search({ text: 'TODO', allBranches: true, limit: 100 });
    expect(sorted(every.hits.map(placeOf))).toEqual(
      sorted([
        ...TODO_EVERY_BRANCH('golden-1'),
        ...TODO_EVERY_BRANCH('golden-2'),
        'other/o1 user main#1 [main]',
        'other/o2 assistant main#1 [main]',
      ]),
    );
    expect(every.more).toBe(false);
    // Each hit names the commit native git has for that turn of that branch.
    const dir = join(root, 'golden-1');
    for (const h of every.hits.filter((x) => x.session === 'golden-1'))
      expect(h.commit).toBe(turnCommit(dir, h.branch, h.turn));
    const a4r = every.hits.find((h) => h.node === 'a4r')!;
    expect(a4r.snippet.slice(0, 31)).toBe('Found three TODO comments: 😀😀');
    expect(a4r.highlights[0]).toEqual([12, 16]);
  });

  it('filters by session, role and branch, and takes words whole (todos is not todo)', async () => {
    const { index } = await goldenRoot();
    const tools = await index.search({ text: 'todo', role: 'tool', allBranches: true, session: 'golden-2' });
    expect(sorted(tools.hits.map(placeOf))).toEqual(
      sorted(TODO_EVERY_BRANCH('golden-2').filter((p) => p.includes(' tool '))),
    );
    const retry = await index.search({ text: 'todo', branch: 'retry-a4r', session: 'golden-1' });
    expect(sorted(retry.hits.map(placeOf))).toEqual(
      sorted(
        TODO_EVERY_BRANCH('golden-1').map((p) =>
          p.replace(/ \w+(-\w+)?#/, ' retry-a4r#').replace(/\[.*\]/, '[retry-a4r]'),
        ),
      ),
    );
    const fork = await index.search({ text: 'FIXME', branch: 'fork-u2e' });
    expect(sorted(fork.hits.map(placeOf))).toEqual(
      sorted([
        'golden-1/u2e user fork-u2e#2 [fork-u2e]',
        'golden-1/a5 assistant fork-u2e#2 [fork-u2e]',
        'golden-2/u2e user fork-u2e#2 [fork-u2e]',
        'golden-2/a5 assistant fork-u2e#2 [fork-u2e]',
      ]),
    );
    expect((await index.search({ text: 'todos comments', allBranches: true })).hits.map(placeOf)).toEqual([]);
    expect((await index.search({ text: '3 todos', allBranches: true })).hits.map(placeOf).sort()).toEqual([
      'golden-1/a4 assistant main#2 [main]',
      'golden-2/a4 assistant main#2 [main]',
    ]);
    const cjk = await index.search({ text: '总结这个仓库', session: 'golden-1' });
    // A run of letters is one word, as the index splits it: the whole run finds it, a part does not.
    expect(cjk.hits.map(placeOf)).toEqual(['golden-1/u4 user fork-u4#2 [fork-u4]']);
    expect((await index.search({ text: '总结', session: 'golden-1' })).hits).toEqual([]);
    expect((await index.search({ text: '总结', regex: true, session: 'golden-1' })).hits.map(placeOf)).toEqual([
      'golden-1/u4 user fork-u4#2 [fork-u4]',
    ]);
    const limited = await index.search({ text: 'todo', allBranches: true, limit: 3 });
    expect(limited.hits).toHaveLength(3);
    expect(limited.more).toBe(true);
  });

  it('answers a regular expression, and refuses bad queries with INVALID_ARGUMENT', async () => {
    const { index } = await goldenRoot();
    const re = await index.search({ text: 'src/[ab]\\.ts:\\d', regex: true, allBranches: true, session: 'golden-1' });
    // Newest first: t4 was indexed after t3.
    expect(re.hits.map(placeOf)).toEqual([
      'golden-1/t4 tool main#2 [main,retry-a4r]',
      'golden-1/t3 tool main#2 [main,retry-a4r]',
    ]);
    expect(re.hits[1]!.snippet).toBe('src/a.ts:1: TODO');
    expect(re.hits[1]!.highlights).toEqual([[0, 10]]);
    for (const q of [
      { text: '(', regex: true },
      { text: '  ' },
      { text: '!!!' },
      { text: 'x', role: 'robot' as never },
      { text: 'x', branch: 'main', allBranches: true },
      { text: 'x', limit: 0 },
    ])
      await expect(index.search(q)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('follows each sync: a pending turn is found once committed, a rebuilt index equals the live one', async () => {
    const { dag, root, mirror, index } = await goldenRoot();
    expect((await index.search({ text: 'fix them', allBranches: true })).hits).toEqual([]);
    const service = createMirrorService({ mirror });
    const errors: unknown[] = [];
    index.attach(service, (_s, e) => errors.push(e));
    await dag.fillNode('golden-1', 'a6', 'Fixed all three.', null);
    service.notify('golden-1');
    await service.drain();
    await index.update('golden-1'); // waits for the update the event started
    expect(errors).toEqual([]);
    const fixed = await index.search({ text: 'fix them', allBranches: true });
    expect(fixed.hits.map(placeOf)).toEqual(['golden-1/u3 user main#3 [main]']);
    expect(fixed.hits[0]!.commit).toBe(git(join(root, 'golden-1'), 'rev-parse', 'main').trim());
    await service.close();
    // The same repositories indexed from nothing, in a copy of the file: the same rows.
    const rebuilt = indexOf(root, { file: join(root, 'rebuilt.db') });
    await rebuilt.reindex();
    expect(rebuilt.contents()).toEqual(index.contents());
    expect(index.contents().messages.length).toBeGreaterThan(30);
  });

  it('follows a branch deleted and another made by native git: each message names its branches, turns and commits', async () => {
    const { root, index } = await goldenRoot();
    const dir = join(root, 'golden-1');
    const numbers = () => {
      const db = new Database(index.file, { readonly: true });
      const rows = db
        .prepare(
          `SELECT b.name, b.n FROM branches b JOIN sessions s ON s.id = b.session WHERE s.session = ? ORDER BY b.n`,
        )
        .all('golden-1') as { name: string; n: number }[];
      db.close();
      return rows.map((r) => `${r.n} ${r.name}`);
    };
    const before = numbers();
    // Each branch of the session has its own number, from 0.
    expect(before.map((r) => Number(r.split(' ')[0]))).toEqual([0, 1, 2, 3]);
    git(dir, 'branch', '-D', 'retry-a4r');
    git(dir, 'branch', 'late', 'main');
    await index.update('golden-1');
    // The deleted branch was the last number; its messages let it go first, in the same
    // transaction, so the new branch takes that number again and no message names it wrongly.
    expect(before.at(-1)).toBe('3 retry-a4r');
    expect(numbers()).toEqual([...before.slice(0, 3), '3 late']);
    const every = await index.search({ text: 'todo', allBranches: true, limit: 100, session: 'golden-1' });
    expect(sorted(every.hits.map(placeOf))).toEqual(
      sorted([
        'golden-1/t2 tool fork-u4#1 [fork-u2e,fork-u4,late,main]',
        'golden-1/u2 user main#2 [late,main]',
        'golden-1/t3 tool main#2 [late,main]',
        'golden-1/t4 tool main#2 [late,main]',
        'golden-1/t5 tool main#2 [late,main]',
      ]),
    );
    for (const h of every.hits) expect(h.commit).toBe(turnCommit(dir, h.branch, h.turn));
    // On the new branch, by its number: its own turns and commits, as native git has them.
    const late = await index.search({ text: 'todo', branch: 'late', session: 'golden-1' });
    expect(late.hits.map((h) => `${h.node} ${h.branch}#${h.turn}`).sort()).toEqual([
      't2 late#1',
      't3 late#2',
      't4 late#2',
      't5 late#2',
      'u2 late#2',
    ]);
    for (const h of late.hits) expect(h.commit).toBe(turnCommit(dir, 'late', h.turn));
    const rebuilt = indexOf(root, { file: join(tempDir(), 'rebuilt.db') });
    await rebuilt.reindex();
    expect(rebuilt.contents()).toEqual(index.contents());
  });

  it('a failed index update fails nothing else: the sync commits, the error is reported', async () => {
    const { dag, root, mirror, index } = await goldenRoot();
    const service = createMirrorService({ mirror });
    const errors: { code: string }[] = [];
    const synced: string[] = [];
    service.on('synced', ({ sessionId }) => synced.push(sessionId));
    service.on('failed', ({ error }) => errors.push(error));
    index.attach(service, (_s, e) => errors.push(e));
    index.close(); // the index is gone: every update fails
    await dag.fillNode('golden-2', 'a6', 'Fixed all three.', null);
    service.notify('golden-2');
    await service.drain();
    await new Promise((r) => setTimeout(r, 50));
    await service.close();
    expect(synced).toEqual(['golden-2']);
    expect(errors.map((e) => e.code)).toEqual(['SEARCH_INDEX_ERROR']);
    expect((await mirror.verify('golden-2')).ok).toBe(true);
    expect(git(join(root, 'golden-2'), 'log', '-1', '--format=%s', 'main').trim()).toBe('turn 3: Fix them');
  });
});
