import { createMirrorService, MemoryDag, type EntityGitError, type ServiceEvents } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { GOLDEN_SESSION, writeGolden } from '@entity-git/test-utils';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { canMount, git, noise, remount, tempDir, tmpfs, unmountAll } from './helpers.js';
import { builtChild } from '@entity-git/test-utils/node-child';

const SID = GOLDEN_SESSION.id;
const GOLDEN_MAIN = '2d6739e6531c79338d437bcd12e6a1911db229f3';
afterAll(unmountAll);
const mountable = canMount();

// Mounting needs root: skipped where it is not allowed, except in CI (root), where it must work.
const skipMount = !mountable && !process.env.CI;

/** The golden session up to its placeholder, synced into a tmpfs of `size` of its own. */
async function goldenOnTmpfs(size: string) {
  const root = tmpfs(size)!;
  const dag = new MemoryDag();
  await writeGolden(dag);
  await dag.setHead(SID, 'a6');
  const mirror = createNodeMirror({ dag, root });
  await mirror.sync(SID);
  return { root, dag, mirror, dir: join(root, SID) };
}

describe('environment faults', () => {
  it.runIf(!!process.env.CI)('CI can mount the small filesystems these tests need', () => {
    expect(mountable).toBe(true);
  });

  it.skipIf(skipMount)(
    'a read-only root: a typed error, retries, no damage, and a clean sync once writable',
    async () => {
      const { root, dag, mirror, dir } = await goldenOnTmpfs('8m');
      const before = git(dir, 'for-each-ref');
      remount(root, 'ro');
      await dag.fillNode(SID, 'a6', 'Filled.', null);
      const service = createMirrorService({ mirror, baseDelayMs: 5, attempts: 3 });
      const failed: ServiceEvents['failed'][] = [];
      const retrying: ServiceEvents['retrying'][] = [];
      service.on('failed', (e) => failed.push(e));
      service.on('retrying', (e) => retrying.push(e));
      service.notify(SID);
      await service.drain();
      expect(retrying).toHaveLength(2);
      expect(failed.map((f) => [f.error.code, f.error.data.fsCode, f.attempts])).toEqual([
        ['STORAGE_ERROR', 'EROFS', 3],
      ]);
      expect(git(dir, 'for-each-ref')).toBe(before);
      remount(root, 'rw');
      service.notify(SID);
      await service.drain();
      expect(git(dir, 'rev-parse', 'main~1').trim()).toBe(GOLDEN_MAIN);
      expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
      expect(git(dir, 'status', '--porcelain')).toBe('');
    },
  );

  it.skipIf(skipMount)(
    'a disk that fills in the middle of a write: QUOTA_EXCEEDED, no damaged repository, and a clean sync after',
    async () => {
      const { root, dag, mirror, dir } = await goldenOnTmpfs('1m');
      const before = git(dir, 'for-each-ref');
      // Incompressible content, larger than the space left.
      const big = noise(1_400_000);
      await dag.fillNode(SID, 'a6', big, null);
      const err = await mirror.sync(SID).then(
        () => null,
        (e: unknown) => e as EntityGitError,
      );
      expect(err?.code).toBe('QUOTA_EXCEEDED');
      // The node's object (over a megabyte, deflated) is what did not fit: written before the ref
      // moves, so the ref did not move, and nothing damaged is left.
      expect(String(err?.data.path)).toContain('/.git/objects/');
      expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
      expect(git(dir, 'rev-parse', 'main').trim()).toBe(GOLDEN_MAIN);
      expect(before).toContain(GOLDEN_MAIN);
      remount(root, 'size=16m');
      await mirror.sync(SID);
      expect(git(dir, 'rev-parse', 'main~1').trim()).toBe(GOLDEN_MAIN);
      expect(JSON.parse(git(dir, 'show', 'main:messages/000017-a-a6.json')).content).toBe(big);
      expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
      expect(git(dir, 'status', '--porcelain')).toBe('');
      expect((await mirror.verify(SID)).ok).toBe(true);
    },
  );

  it.skipIf(skipMount)(
    'a disk too small for a working-tree file only: the commit lands, no part of the file is left, a clean sync after',
    async () => {
      const { root, dag, mirror, dir } = await goldenOnTmpfs('1m');
      // Deflates to about a kilobyte (the object fits), but is 1.4 MB in the working tree.
      const big = 'x'.repeat(1_400_000);
      await dag.fillNode(SID, 'a6', big, null);
      const err = await mirror.sync(SID).then(
        () => null,
        (e: unknown) => e as EntityGitError,
      );
      expect(err?.code).toBe('QUOTA_EXCEEDED');
      const file = join(dir, 'messages', '000017-a-a6.json');
      expect(err?.data.path).toBe(file);
      // Objects are written before the ref moves: the turn's commit is whole and in place.
      expect(git(dir, 'rev-parse', 'main~1').trim()).toBe(GOLDEN_MAIN);
      expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
      // No part of the file that did not fit is left in the working tree to keep the disk full.
      expect(existsSync(file)).toBe(false);
      remount(root, 'size=16m');
      await mirror.sync(SID);
      expect(readFileSync(file, 'utf8')).toBe(git(dir, 'show', 'main:messages/000017-a-a6.json'));
      expect(git(dir, 'status', '--porcelain')).toBe('');
      expect((await mirror.verify(SID)).ok).toBe(true);
    },
  );

  it.skipIf(skipMount)(
    'a backfill on a disk too small for it: QUOTA_EXCEEDED, no part of a file left, the commits of a roomy disk after',
    async () => {
      // 320 messages of 3 KB that deflate to almost nothing: the pack alone would fit in 1 MB, the
      // working tree (a page a file) does not. Its files are written on a thread beside the pack,
      // so which of the two meets the full disk first is the race's: either way the sync fails
      // whole, and nothing half-written stays.
      const dag = new MemoryDag();
      await dag.createSession({ id: 's', title: 'Backfill on a full disk', created_at: 1779500000 });
      let prev: string | null = null;
      for (let seq = 1; seq <= 320; seq++) {
        const role = (['user', 'assistant', 'tool', 'assistant'] as const)[(seq - 1) % 4]!;
        await dag.addNode({
          id: `n${seq}`,
          session_id: 's',
          seq,
          role,
          content: `${seq} ${'x'.repeat(3000)}`,
          predecessor: prev,
          caller: role === 'tool' ? prev : null,
          created_at: 1779500000 + seq,
          metadata: null,
        });
        prev = `n${seq}`;
      }
      const root = tmpfs('1m')!;
      const mirror = createNodeMirror({ dag, root });
      const err = await mirror.sync('s').then(
        () => null,
        (e: unknown) => e as EntityGitError,
      );
      expect(err?.code).toBe('QUOTA_EXCEEDED');
      const dir = join(root, 's');
      // Every file left is whole: one the disk cut short is gone, and so is the pack's temp file.
      const messages = join(dir, 'messages');
      // How many files the thread wrote before the sync failed is the race's too (none when the
      // failure came first): whichever it is, each one left must be whole.
      const left = existsSync(messages) ? readdirSync(messages) : [];
      for (const name of left) {
        const seq = Number(name.split('-')[0]);
        expect(JSON.parse(readFileSync(join(messages, name), 'utf8')).content, name).toBe(`${seq} ${'x'.repeat(3000)}`);
      }
      expect(readdirSync(join(dir, '.git', 'objects', 'pack')).filter((n) => n.startsWith('tmp_'))).toEqual([]);
      remount(root, 'size=16m');
      expect(await mirror.sync('s')).toMatchObject({ head: 'main' });
      const roomy = createNodeMirror({ dag, root: tempDir() });
      await roomy.sync('s');
      expect(git(dir, 'rev-parse', 'main')).toBe(git(roomy.repoPath('s'), 'rev-parse', 'main'));
      expect(git(dir, 'ls-files', '-s')).toBe(git(roomy.repoPath('s'), 'ls-files', '-s'));
      expect(readdirSync(messages)).toHaveLength(320);
      expect(git(dir, 'diff-files', '--name-only')).toBe('');
      expect(git(dir, 'status', '--porcelain')).toBe('');
      expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
    },
  );

  it('too many open files: a typed error, then a clean sync once descriptors are free', () => {
    const root = tempDir();
    const child = builtChild(join(import.meta.dirname, 'emfile-child.ts'));
    const r = spawnSync('bash', ['-c', `ulimit -n 400 && exec "${process.execPath}" "${child}" "${root}"`], {
      encoding: 'utf8',
    });
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as { exhausted: number; first: string; fsCode: string; second: string[] };
    expect(out.exhausted).toBeGreaterThan(100);
    expect([out.first, out.fsCode]).toEqual(['STORAGE_ERROR', 'EMFILE']);
    expect(out.second).toEqual(['main', 'retry-a4r', 'fork-u2e', 'fork-u4']);
    const dir = join(root, SID);
    expect(git(dir, 'rev-parse', 'main').trim()).toBe(GOLDEN_MAIN);
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });
});
