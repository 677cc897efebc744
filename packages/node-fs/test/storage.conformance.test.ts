import { nodeStorage } from '@entity-git/node-fs';
import { describe, expect, it } from 'vitest';
import { testStorage } from '@entity-git/test-utils';
import { rm } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync, inflateSync } from 'node:zlib';
import { tempDir } from './helpers.js';

testStorage({
  name: 'node-fs',
  async create() {
    const root = tempDir();
    return { storage: nodeStorage(), root, cleanup: () => rm(root, { recursive: true, force: true }) };
  },
});

testStorage({
  name: 'node-fs with fsync',
  async create() {
    const root = tempDir();
    return { storage: nodeStorage({ fsync: true }), root, cleanup: () => rm(root, { recursive: true, force: true }) };
  },
});

describe('the node codec', () => {
  it('deflates with a window sized to the input: the default level 1 stream byte for byte but for the header, inflated by zlib and by git', () => {
    const codec = nodeStorage().codec!;
    let x = 99;
    const random = (n: number) =>
      Uint8Array.from({ length: n }, () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) >>> 24);
    const json = (n: number) =>
      new TextEncoder().encode(
        JSON.stringify({
          role: 'tool',
          content: 'the quick brown fox jumps over the lazy dog '.repeat(Math.ceil(n / 44)).slice(0, n),
        }),
      );
    const inputs = [
      new Uint8Array(0),
      json(1),
      json(200),
      json(2400),
      json(40_000),
      json(300_000),
      random(100),
      random(5000),
      random(70_000),
    ];
    for (const data of inputs) {
      const ours = Buffer.from(codec.deflate(data));
      const plain = deflateSync(data, { level: 1 });
      expect(ours.subarray(2).equals(plain.subarray(2)), `${data.length} bytes`).toBe(true);
      expect(inflateSync(ours).equals(Buffer.from(data)), `${data.length} bytes`).toBe(true);
    }
    // Git reads such an object: a loose blob of 2,400 bytes, its header naming a 4 KB window.
    const dir = tempDir();
    execFileSync('git', ['init', '-q', dir]);
    const blob = json(2400);
    const framed = Buffer.concat([Buffer.from(`blob ${blob.length}\0`), blob]);
    const oid = codec.sha1(framed);
    const z = Buffer.from(codec.deflate(framed));
    expect(z[0]! >> 4).toBeLessThan(7);
    mkdirSync(join(dir, '.git', 'objects', oid.slice(0, 2)), { recursive: true });
    writeFileSync(join(dir, '.git', 'objects', oid.slice(0, 2), oid.slice(2)), z);
    expect(execFileSync('git', ['cat-file', 'blob', oid], { cwd: dir }).equals(Buffer.from(blob))).toBe(true);
    expect(
      execFileSync('git', ['fsck', '--strict', '--no-dangling'], {
        cwd: dir,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    ).toBe('');
  });

  it('hashes an object from its parts (no frame copied) and inflates to a size hint', () => {
    const codec = nodeStorage().codec!;
    expect(codec.sha1Parts).toBeTypeOf('function');
    const hello = new TextEncoder().encode('hello\n');
    expect(codec.sha1Parts!([new TextEncoder().encode('blob 6\0'), hello])).toBe(
      'ce013625030ba8dba906f756967f9e9ca394464a',
    );
    const z = codec.deflate(hello);
    expect(Buffer.from(codec.inflate(z, 6)).toString()).toBe('hello\n');
  });
});
