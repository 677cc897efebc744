import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { MemoryDag, readRepositoryChanges, type SyncResult } from '@entity-git/core';
import { storeFor } from '@entity-git/git';
import { createNodeMirror, nodeStorage } from '@entity-git/node-fs';
import { writeGolden } from '@entity-git/test-utils';
import { describe, expect, it } from 'vitest';
import type { SearchIndex } from '../src/index.js';
import { indexOpener, placeOf, tempDir } from './helpers.js';

const indexOf = indexOpener();

/** The live index's whole contents (sessions, branches and tips, each message's places, words and text) equal a rebuild's. */
async function expectEqualToReindex(root: string, live: SearchIndex): Promise<void> {
  const rebuilt = indexOf(root, { file: join(tempDir(), 'rebuilt.db') });
  await rebuilt.reindex();
  expect(live.contents()).toEqual(rebuilt.contents());
}

describe('the index update from a sync result', () => {
  it('after each kind of sync (first, a filled turn, a new turn, a retry, HEAD moved, nothing) equals a reindex', async () => {
    const dag = new MemoryDag();
    await writeGolden(dag);
    const root = tempDir();
    const mirror = createNodeMirror({ dag, root });
    const index = indexOf(root);
    const step = async (): Promise<SyncResult> => {
      const result = await mirror.sync('golden-1');
      await index.afterSync(result);
      await expectEqualToReindex(root, index);
      return result;
    };
    // The first sync: the index does not know the session, every branch is read.
    const first = await step();
    expect(first.branchesMoved.sort()).toEqual(['fork-u2e', 'fork-u4', 'main', 'retry-a4r']);
    expect(index.contents().messages).toHaveLength(17);
    // The pending reply filled: main's turn 3 committed.
    await dag.fillNode('golden-1', 'a6', 'Fixed all three, the flaky one too.', null);
    expect((await step()).branchesMoved).toEqual(['main']);
    expect((await index.search({ text: 'flaky', branch: 'main' })).hits.map(placeOf)).toEqual([
      'golden-1/a6 assistant main#3 [main]',
    ]);
    // A new turn on main.
    await dag.appendNode({
      id: 'u9',
      session_id: 'golden-1',
      role: 'user',
      content: 'Any zebra left?',
      predecessor: 'a6',
    });
    await dag.appendNode({
      id: 'a9',
      session_id: 'golden-1',
      role: 'assistant',
      content: 'No zebra.',
      predecessor: 'u9',
    });
    await step();
    // A retry of that reply: a new branch sharing u9 with main (one hit, on both branches).
    await dag.appendNode({
      id: 'a9r',
      session_id: 'golden-1',
      role: 'assistant',
      content: 'One zebra.',
      predecessor: 'u9',
    });
    const retry = await step();
    expect(retry.branchesMoved).toHaveLength(1);
    const zebra = await index.search({ text: 'zebra', allBranches: true });
    expect(zebra.hits.map(placeOf).sort()).toEqual([
      'golden-1/a9 assistant main#4 [main]',
      `golden-1/a9r assistant ${retry.branchesMoved[0]}#4 [${retry.branchesMoved[0]}]`,
      `golden-1/u9 user main#4 [main,${retry.branchesMoved[0]}]`,
    ]);
    // HEAD moved only: no branch read, the session's HEAD recorded (the default search follows it).
    await dag.setHead('golden-1', 'a9');
    const moved = await step();
    expect(moved.head).toBe('main');
    expect((await index.search({ text: 'zebra' })).hits.map((h) => h.node).sort()).toEqual(['a9', 'u9']);
    // Nothing to do.
    const none = await mirror.sync('golden-1');
    expect(none.branchesMoved).toEqual([]);
    expect(await index.afterSync(none)).toEqual({ sessions: 1, added: 0, removed: 0 });
    await expectEqualToReindex(root, index);
  });

  it('apply records changes read elsewhere exactly as update does', async () => {
    const dag = new MemoryDag();
    await writeGolden(dag, { sessionId: 'golden-2' });
    const root = tempDir();
    await createNodeMirror({ dag, root }).sync('golden-2');
    const updated = indexOf(root);
    await updated.update('golden-2');
    const applied = indexOf(root, { file: join(tempDir(), 'applied.db') });
    const dir = join(root, 'golden-2');
    const changes = await readRepositoryChanges(storeFor(nodeStorage()), dir, new Map());
    expect(applied.apply(dir, changes!)).toEqual({ sessions: 1, added: 17, removed: 0 });
    expect(applied.contents()).toEqual(updated.contents());
  });

  it('answers from the index alone: hits and snippets stay when the repositories are gone', async () => {
    const dag = new MemoryDag();
    await writeGolden(dag);
    const root = tempDir();
    const index = indexOf(root);
    await index.afterSync(await createNodeMirror({ dag, root }).sync('golden-1'));
    const before = await index.search({ text: 'todo', allBranches: true });
    expect(before.hits).toHaveLength(6);
    renameSync(join(root, 'golden-1'), join(root, '..', `moved-${Date.now()}`));
    const after = await index.search({ text: 'todo', allBranches: true });
    expect(after).toEqual(before);
    const a4r = after.hits.find((h) => h.node === 'a4r')!;
    expect(a4r.snippet.slice(0, 31)).toBe('Found three TODO comments: 😀😀');
    expect(a4r.highlights[0]).toEqual([12, 16]);
  });
});
