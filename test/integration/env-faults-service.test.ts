// Environment faults met through the mirror service (createMirrorService), not a direct sync: the
// disk filling in the middle of a write (a 1 MB tmpfs) and too many open files (ulimit -n 400).
// Each: `retrying` events with the typed error, then `failed`, or success once the fault is
// lifted; no damaged repository (`git fsck --strict`); and the queue keeps serving another session.
import { createMirrorService, MemoryDag, type Mirror, type ServiceEvents } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { GOLDEN_SESSION, writeGolden } from '@entity-git/test-utils';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { canMount, git, noise, remount, tempDir, tmpfs, unmountAll } from '../../packages/node-fs/test/helpers.js';
import { builtChild } from '@entity-git/test-utils/node-child';

const A = GOLDEN_SESSION.id;
const B = 'other-session';
const GOLDEN_MAIN = '2d6739e6531c79338d437bcd12e6a1911db229f3';
afterAll(unmountAll);
// Mounting needs root: skipped where it is not allowed, except in CI (root), where it must work.
const mountable = canMount();
const skipMount = !mountable && !process.env.CI;

const refs = (dir: string) => git(dir, 'for-each-ref', '--format=%(refname) %(objectname)');

/** The DAG: A synced with its head placeholder a6 then filled with more than the disk holds; B, a whole golden session, never synced. */
async function dagWithBigTurn(_big: string): Promise<MemoryDag> {
  const dag = new MemoryDag();
  await writeGolden(dag);
  await dag.setHead(A, 'a6');
  await writeGolden(dag, { sessionId: B });
  return dag;
}

/** The refs of A and B after an undisturbed run. */
async function reference(big: string): Promise<{ a: string; b: string }> {
  const dag = await dagWithBigTurn(big);
  const root = tempDir('eg-ref-');
  const mirror = createNodeMirror({ dag, root });
  await mirror.sync(A);
  await dag.fillNode(A, 'a6', big, null);
  await mirror.sync(A);
  await mirror.sync(B);
  return { a: refs(join(root, A)), b: refs(join(root, B)) };
}

type Ev = [string, string, ...unknown[]];

/**
 * One mirror for the service over two roots: B's repository on the ordinary disk, every other
 * session's on the small one. (On one full disk B could not be served: the failed write leaves
 * its partial working-tree file, written in place, holding the space — see the report.)
 */
function routed(small: Mirror, other: Mirror): Mirror {
  return new Proxy(small, {
    get(target, key) {
      const fn = (target as unknown as Record<PropertyKey, unknown>)[key];
      if (typeof fn !== 'function') return fn;
      return (...args: unknown[]) => {
        const m = args[0] === B ? other : target;
        return (m as unknown as Record<PropertyKey, (...a: unknown[]) => unknown>)[key]!.apply(m, args);
      };
    },
  });
}

function record(service: ReturnType<typeof createMirrorService>): Ev[] {
  const events: Ev[] = [];
  service.on('retrying', (e: ServiceEvents['retrying']) => events.push(['retrying', e.sessionId, e.error.code]));
  service.on('failed', (e: ServiceEvents['failed']) => events.push(['failed', e.sessionId, e.error.code, e.attempts]));
  service.on('committed', (e: ServiceEvents['committed']) => events.push(['committed', e.sessionId]));
  return events;
}

function whole(dir: string): void {
  expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
  // The ref names a complete commit, or did not move.
  const main = git(dir, 'rev-parse', 'main').trim();
  expect(main === GOLDEN_MAIN || git(dir, 'rev-parse', 'main~1').trim() === GOLDEN_MAIN).toBe(true);
}

describe('environment faults through the mirror service', () => {
  it.runIf(!!process.env.CI)('CI can mount the small filesystem these tests need', () => {
    expect(mountable).toBe(true);
  });

  it.skipIf(skipMount)(
    'a disk that fills: retrying, then failed with QUOTA_EXCEEDED; another session served meanwhile; nothing damaged; a clean sync once it grows',
    async () => {
      const big = noise(1_400_000);
      const expected = await reference(big);
      const root = tmpfs('1m')!;
      const rootB = tempDir('eg-other-');
      const dag = await dagWithBigTurn(big);
      const mirror = routed(createNodeMirror({ dag, root }), createNodeMirror({ dag, root: rootB }));
      await mirror.sync(A);
      await dag.fillNode(A, 'a6', big, null);
      const service = createMirrorService({ mirror, concurrency: 1, attempts: 3, baseDelayMs: 100 });
      const events = record(service);
      service.notify(A);
      service.notify(B);
      await service.drain();
      expect(events).toEqual([
        ['retrying', A, 'QUOTA_EXCEEDED'],
        // While A waits out its backoff, the one slot serves B.
        ['committed', B],
        ['retrying', A, 'QUOTA_EXCEEDED'],
        ['failed', A, 'QUOTA_EXCEEDED', 3],
      ]);
      whole(join(root, A));
      expect(refs(join(rootB, B))).toBe(expected.b);
      expect(git(join(rootB, B), 'fsck', '--strict', '--no-dangling')).toBe('');

      remount(root, 'size=16m');
      service.notify(A);
      await service.drain();
      expect(events.slice(4)).toEqual([['committed', A]]);
      expect(refs(join(root, A))).toBe(expected.a);
      for (const dir of [join(root, A), join(rootB, B)]) {
        expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
        expect(git(dir, 'status', '--porcelain')).toBe('');
      }
      for (const s of [A, B]) expect((await mirror.verify(s)).ok).toBe(true);
    },
  );

  it.skipIf(skipMount)(
    'a disk that fills, grown while the service waits to retry: the retry succeeds with the undisturbed ids',
    async () => {
      const big = noise(1_400_000);
      const expected = await reference(big);
      const root = tmpfs('1m')!;
      const dag = await dagWithBigTurn(big);
      const mirror = createNodeMirror({ dag, root });
      await mirror.sync(A);
      await dag.fillNode(A, 'a6', big, null);
      const service = createMirrorService({ mirror, concurrency: 1, attempts: 3, baseDelayMs: 100 });
      const events = record(service);
      service.on('retrying', () => {
        whole(join(root, A));
        remount(root, 'size=16m');
      });
      service.notify(A);
      await service.drain();
      expect(events).toEqual([
        ['retrying', A, 'QUOTA_EXCEEDED'],
        ['committed', A],
      ]);
      expect(refs(join(root, A))).toBe(expected.a);
      expect(git(join(root, A), 'fsck', '--strict', '--no-dangling')).toBe('');
      expect(git(join(root, A), 'status', '--porcelain')).toBe('');
    },
  );

  it('too many open files: retrying, then failed with EMFILE; once descriptors are freed during a backoff the retry and another session succeed', async () => {
    const dag = new MemoryDag();
    await writeGolden(dag, { sessionId: B });
    const refRoot = tempDir('eg-ref-');
    await createNodeMirror({ dag, root: refRoot }).sync(B);
    const mainB = git(join(refRoot, B), 'rev-parse', 'main').trim();
    const root = tempDir();
    const child = builtChild(join(import.meta.dirname, 'emfile-service-child.ts'));
    const r = spawnSync(
      'bash',
      ['-c', `ulimit -n 400 && exec "${process.execPath}" "${child}" "${root}" "${A}" "${B}"`],
      { encoding: 'utf8' },
    );
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as { exhausted: number; events: unknown[][] };
    expect(out.exhausted).toBeGreaterThan(100);
    const branches = ['main', 'retry-a4r', 'fork-u2e', 'fork-u4'];
    expect(out.events).toEqual([
      ['retrying', A, 'STORAGE_ERROR', 'EMFILE', 1],
      ['retrying', A, 'STORAGE_ERROR', 'EMFILE', 2],
      ['failed', A, 'STORAGE_ERROR', 'EMFILE', 3],
      ['retrying', A, 'STORAGE_ERROR', 'EMFILE', 1],
      ['descriptors freed'],
      // B was notified during A's backoff and takes the one slot first.
      ['committed', B, branches],
      ['committed', A, branches],
    ]);
    for (const s of [A, B]) {
      const dir = join(root, s);
      expect(git(dir, 'rev-parse', 'main').trim()).toBe(s === A ? GOLDEN_MAIN : mainB);
      expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
      expect(git(dir, 'status', '--porcelain')).toBe('');
    }
  });
});
