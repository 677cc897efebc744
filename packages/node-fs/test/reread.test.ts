import { MemoryDag, type DagNode } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from './helpers.js';

const SID = 'reread-1';
const T0 = 1779600000;

/** A session of one turn (prompt, reply), the reply complete: a source that then rewrites it in place. */
async function oneTurn(): Promise<MemoryDag> {
  const dag = new MemoryDag();
  await dag.createSession({ id: SID, created_at: T0 });
  const node = (seq: number, id: string, role: DagNode['role'], content: string, predecessor: string | null) => ({
    id,
    session_id: SID,
    seq,
    role,
    content,
    predecessor,
    caller: null,
    created_at: T0 + seq,
    metadata: null,
  });
  await dag.addNode(node(1, 'u1', 'user', 'first question', null));
  await dag.addNode(node(2, 'a1', 'assistant', 'first part', 'u1'));
  return dag;
}

const tips = (repo: string) => git(repo, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads').trim();

describe('sync({ reread })', () => {
  it('commits again a turn whose complete node the source rewrote in place, from a new mirror too', async () => {
    const dag = await oneTurn();
    const root = tempDir();
    const mirror = createNodeMirror({ dag, root });
    await mirror.sync(SID);
    const repo = mirror.repoPath(SID);
    const first = git(repo, 'rev-parse', 'main').trim();

    await dag.fillNode(SID, 'a1', 'first part, and the rest', null);
    await dag.appendNode({ id: 'u2', session_id: SID, role: 'user', content: 'next', predecessor: 'a1' });
    await dag.appendNode({ id: 'a2', session_id: SID, role: 'assistant', content: 'answer', predecessor: 'u2' });
    // A mirror of its own: the state read back from the repository, as another process reads it.
    const again = await createNodeMirror({ dag, root }).sync(SID, { reread: 1 });
    expect(again.commitsWritten).toBe(2);

    const fresh = createNodeMirror({ dag, root: tempDir() });
    await fresh.sync(SID);
    expect(tips(repo)).toBe(tips(fresh.repoPath(SID)));
    expect(git(repo, 'rev-list', '--count', 'main').trim()).toBe('2');
    expect(git(repo, 'show', 'main~1:messages/000002-a-a1.json')).toContain('"content": "first part, and the rest"');
    // The commit the rewrite replaced is no ancestor of the tip, and the reflog keeps it.
    expect(git(repo, 'reflog', '--format=%H', 'main').trim().split('\n')).toEqual([
      git(repo, 'rev-parse', 'main').trim(),
      first,
    ]);
    expect(() => git(repo, 'merge-base', '--is-ancestor', first, 'main')).toThrow();
    expect(git(repo, 'fsck', '--strict', '--no-progress')).toBe('');
    expect(git(repo, 'status', '--porcelain')).toBe('');
    // Read again, nothing changed: nothing written.
    expect((await mirror.sync(SID, { reread: 1 })).noop).toBe(true);
  });

  it('without it a node a commit holds is not read again; a bad seq is INVALID_ARGUMENT', async () => {
    const dag = await oneTurn();
    const mirror = createNodeMirror({ dag, root: tempDir() });
    await mirror.sync(SID);
    const before = tips(mirror.repoPath(SID));
    await dag.fillNode(SID, 'a1', 'rewritten', null);
    expect((await mirror.sync(SID)).noop).toBe(true);
    expect(tips(mirror.repoPath(SID))).toBe(before);
    for (const reread of [0, 1.5, -1, Number.NaN])
      await expect(mirror.sync(SID, { reread })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect((await mirror.sync(SID, { reread: 2 })).commitsWritten).toBe(1);
    expect(git(mirror.repoPath(SID), 'show', 'main:messages/000002-a-a1.json')).toContain('"content": "rewritten"');
  });
});
