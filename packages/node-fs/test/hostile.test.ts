import { MemoryDag, type DagNode, type DagSource, type Session } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HOSTILE_IDS } from '@entity-git/test-utils';
import { git, listTree, tempDir } from './helpers.js';

describe('hostile ids on node-fs', () => {
  it('never escape the root, and round-trip through files, trailers and replay', async () => {
    const outer = tempDir();
    const root = join(outer, 'root');
    mkdirSync(root);
    const dag = new MemoryDag();
    const mirror = createNodeMirror({ dag, root });
    for (const [i, sid] of HOSTILE_IDS.entries()) {
      await dag.createSession({ id: sid, created_at: 1779500000 });
      // Node ids are hostile too; two of them differ only in case.
      const ids = [
        HOSTILE_IDS[(i + 1) % HOSTILE_IDS.length]!,
        'Case',
        'case',
        HOSTILE_IDS[(i + 7) % HOSTILE_IDS.length]!,
      ];
      const unique = [...new Set(ids)];
      let prev: string | null = null;
      unique.forEach((id, k) => {
        void dag.addNode({
          id,
          session_id: sid,
          seq: k + 1,
          role: k % 2 ? 'assistant' : 'user',
          content: `m${k}`,
          predecessor: prev,
          caller: null,
          created_at: 1779500000 + k,
          metadata: null,
        });
        prev = id;
      });
      const r = await mirror.sync(sid);
      expect(r.head).toBe('main');
      const dir = mirror.repoPath(sid);
      expect(dir.startsWith(`${root}/`)).toBe(true);
      expect(git(dir, 'fsck', '--strict')).toBe('');
      expect(git(dir, 'status', '--porcelain')).toBe('');
      const log = await mirror.log(sid);
      const view = await mirror.read(sid, log[0]!.sha);
      expect(view.messages.map((m) => m.id)).toEqual(unique);
      expect(view.messages.every((m) => m.session_id === sid)).toBe(true);
      expect(log[0]!.node).toBe(unique.at(-1));
    }
    // Everything is inside root: one directory per session, nothing else anywhere.
    expect(readdirSync(outer)).toEqual(['root']);
    expect(readdirSync(root)).toHaveLength(HOSTILE_IDS.length);
    expect(listTree(root).every((p) => !p.split('/').includes('..'))).toBe(true);
  });

  it('rejects non-JSON values from a DagSource with NON_JSON_VALUE and writes no commit', async () => {
    const session: Session = {
      id: 's',
      title: null,
      agent_id: null,
      model: null,
      project_id: null,
      head: null,
      created_at: 1,
      metadata: null,
    };
    const bad = (content: unknown): DagSource => ({
      listSessions: async () => ['s'],
      getSession: async () => session,
      getHead: async () => null,
      async *nodesAfter() {
        yield {
          id: 'u',
          session_id: 's',
          seq: 1,
          role: 'user',
          content,
          predecessor: null,
          caller: null,
          created_at: 1,
          metadata: null,
        } as unknown as DagNode;
      },
    });
    for (const value of [NaN, Infinity, 10n, () => 1, { a: undefined }]) {
      const root = tempDir();
      const mirror = createNodeMirror({ dag: bad(value), root });
      await expect(mirror.sync('s')).rejects.toMatchObject({ code: 'NON_JSON_VALUE' });
      const dir = mirror.repoPath('s');
      expect(git(dir, 'rev-list', '--all').trim()).toBe('');
    }
    const cyclic: Record<string, unknown> = {};
    cyclic.me = cyclic;
    await expect(createNodeMirror({ dag: bad(cyclic), root: tempDir() }).sync('s')).rejects.toMatchObject({
      code: 'NON_JSON_VALUE',
    });
  });

  it('refuses bad session ids, unknown sessions and nodes of another session', async () => {
    const dag = new MemoryDag();
    const mirror = createNodeMirror({ dag, root: tempDir() });
    await expect(mirror.sync('')).rejects.toMatchObject({ code: 'INVALID_ID' });
    await expect(mirror.sync('missing')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
    expect(() => createNodeMirror({ dag, root: tempDir(), identity: { name: 'x', email: 'a>b' } })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION' }),
    );
    const session = (await dag.createSession({ id: 'mine' })) as Session;
    const foreign: DagSource = {
      listSessions: async () => ['mine'],
      getSession: async () => session,
      getHead: async () => null,
      async *nodesAfter() {
        yield {
          id: 'u',
          session_id: 'other',
          seq: 1,
          role: 'user',
          content: 'x',
          predecessor: null,
          caller: null,
          created_at: 1,
          metadata: null,
        };
      },
    };
    await expect(createNodeMirror({ dag: foreign, root: tempDir() }).sync('mine')).rejects.toMatchObject({
      code: 'INVALID_NODE',
    });
  });
});
