// The working-tree writer thread (nodeStorage's writeFiles): files handed over in batches, written
// in order, each one's stat handed back; the first failure ends the call, and no later batch is
// written.
import { existsSync, lstatSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { storeFor } from '@entity-git/git';
import { describe, expect, it } from 'vitest';
import { nodeStorage } from '../src/index.js';
import { tempDir } from './helpers.js';

const bytes = (n: number, seed: number) => {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (seed * 31 + i * 7) & 0xff;
  return out;
};

describe('writeFiles on the writer thread', () => {
  it('writes every file of many batches (small ones, and ones over a batch alone) and gives each its own lstat', async () => {
    const dir = tempDir('eg-write-files-');
    const store = storeFor(nodeStorage());
    // 700 small files (three batches by count), then two of 1.5 MB (a batch each by size), then more small ones.
    const sizes = [...Array.from({ length: 700 }, (_, i) => i % 300), 1_500_000, 1_500_000, 5, 0, 17];
    const files = sizes.map((n, i) => ({
      path: join(dir, 'messages', `f${String(i).padStart(4, '0')}.json`),
      data: bytes(n, i),
    }));
    const stats = await store.writeFiles(files);
    expect(stats).toHaveLength(files.length);
    for (const [i, f] of files.entries()) {
      expect(Buffer.from(readFileSync(f.path)).equals(Buffer.from(f.data))).toBe(true);
      const st = lstatSync(f.path, { bigint: true });
      expect([stats[i]!.size, stats[i]!.ino, stats[i]!.mtimeNs]).toEqual([f.data.length, Number(st.ino), st.mtimeNs]);
      expect(stats[i]!.isFile()).toBe(true);
    }
  });

  it('the first failure ends the call: the files before it are written, none of a later batch', async () => {
    const dir = tempDir('eg-write-files-');
    writeFileSync(join(dir, 'blocker'), 'a file where a directory is wanted');
    mkdirSync(join(dir, 'ok'));
    const store = storeFor(nodeStorage());
    const path = (i: number) => join(dir, i === 300 ? 'blocker' : 'ok', i === 300 ? 'below' : `f${i}`);
    const files = Array.from({ length: 900 }, (_, i) => ({ path: path(i), data: bytes(10, i) }));
    await expect(store.writeFiles(files)).rejects.toMatchObject({ name: 'EntityGitError', code: 'STORAGE_ERROR' });
    expect(existsSync(path(299))).toBe(true);
    expect(existsSync(path(301))).toBe(false);
    expect(existsSync(path(600))).toBe(false);
  });
});
