import { createMirror, MemoryDag } from '@entity-git/core';
import { nodeStorage } from '@entity-git/node-fs';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from './helpers.js';

// Packs whose index is not version 2 are not read (git has written version 2 since 1.5.2;
// isomorphic-git 1.44 does not read version 1 either, measured: it fails inside
// readObjectPacked), so such a repository is reported with a typed error, never a crash; native
// git still reads it.
describe('a pack with a version 1 index', () => {
  it('reports what it cannot read as OBJECT_CORRUPT', async () => {
    const dag = new MemoryDag();
    await dag.createSession({ id: 's1', title: 'Old packs', created_at: 1779500000 });
    let prev: string | null = null;
    for (let i = 1; i <= 6; i++) {
      const node = await dag.appendNode({
        id: `n${i}`,
        session_id: 's1',
        created_at: 1779500000 + i,
        role: i % 2 ? 'user' : 'assistant',
        content: `message ${i}`,
        predecessor: prev,
      });
      prev = node.id;
    }
    const root = tempDir();
    await createMirror({ dag, storage: nodeStorage(), root }).sync('s1');
    const dir = join(root, 's1');
    git(dir, '-c', 'pack.indexVersion=1', 'repack', '-a', '-d', '-q');
    git(dir, 'prune-packed');
    const packDir = join(dir, '.git', 'objects', 'pack');
    const idx = readdirSync(packDir).find((f) => f.endsWith('.idx'))!;
    // A version 2 index starts with "\377tOc"; version 1 has no magic.
    expect(readFileSync(join(packDir, idx)).subarray(0, 4).toString('latin1')).not.toBe('\xfftOc');
    expect(
      readdirSync(join(dir, '.git', 'objects')).filter(
        (d) => /^[0-9a-f]{2}$/.test(d) && readdirSync(join(dir, '.git', 'objects', d)).length > 0,
      ),
    ).toEqual([]);

    const fresh = createMirror({ dag, storage: nodeStorage(), root });
    await expect(fresh.log('s1')).rejects.toMatchObject({
      code: 'OBJECT_CORRUPT',
      data: { oid: git(dir, 'rev-parse', 'HEAD').trim() },
    });
    expect(git(dir, 'rev-list', '--count', 'HEAD').trim()).toBe('3');
    expect(git(dir, 'fsck', '--strict').trim()).toBe('');
  });
});
