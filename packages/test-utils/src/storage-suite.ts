import { EntityGitError } from '@entity-git/core';
import { ObjectStore, RefStore, Store, type Storage } from '@entity-git/git';
import { describe, expect, it } from 'vitest';

export interface StorageFixture {
  storage: Storage;
  /** An empty absolute directory the suite may write under. */
  root: string;
  cleanup?(): Promise<void>;
}

const text = (b: Uint8Array | null) => (b === null ? null : new TextDecoder().decode(b));
const who = { name: 'suite', email: 'suite@localhost' };
const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);

/** Registers test `title`, run on a fresh fixture and a `Store` over its storage, cleaned up after. */
type WithFixture = (title: string, fn: (f: StorageFixture, store: Store) => Promise<void>) => void;

/**
 * The storage conformance suite, one for every adapter: what core relies on from any of them — fs
 * semantics and error codes, create-exclusive, append, locks — and the git layer on top of it
 * (atomic objects, a damaged object rewritten, refs moved under their lock with an old-value
 * check and a reflog).
 */
export function testStorage(options: { name: string; create(): Promise<StorageFixture> }): void {
  const { name, create } = options;
  const withFixture: WithFixture = (title, fn) =>
    it(title, async () => {
      const f = await create();
      try {
        await fn(f, new Store(f.storage));
      } finally {
        await f.cleanup?.();
      }
    });

  describe(`storage conformance: ${name}`, () => {
    readTests(withFixture);
    writeTests(withFixture);
    gitObjectTests(withFixture);
    fileBatchTests(withFixture);
    refTests(withFixture);
  });
}

/** Reading: what was written, a range into a buffer, and the codec’s inflate and SHA-1. */
function readTests(withFixture: WithFixture): void {
  withFixture('reads back what it wrote, and reports a missing file as ENOENT', async ({ root }, store) => {
    await store.writeAtomic(`${root}/a/b/c.txt`, 'hello ✓');
    expect(text(await store.read(`${root}/a/b/c.txt`))).toBe('hello ✓');
    expect(await store.read(`${root}/a/b/none.txt`)).toBeNull();
    await expect(store.fs.readFile(`${root}/none`)).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await store.readdir(`${root}/a/b`)).sort()).toEqual(['c.txt']);
    const st = await store.fs.lstat(`${root}/a/b/c.txt`);
    expect(st.isFile()).toBe(true);
    expect(st.size).toBe(9);
    expect((await store.fs.lstat(`${root}/a`)).isDirectory()).toBe(true);
  });

  withFixture(
    'reads a part of a file into a buffer (readRangeInto, or readRange and a copy): the count, the bytes, fewer at the end, null for no file',
    async ({ root }, store) => {
      const data = new Uint8Array(300_000);
      for (let i = 0; i < data.length; i++) data[i] = (i * 7 + (i >> 8)) & 0xff;
      await store.writeAtomic(`${root}/p/blob`, data);
      const target = new Uint8Array(70_000).fill(0xee);
      expect(await store.readRangeInto(`${root}/p/blob`, 100_000, target.subarray(0, 65_536))).toBe(65_536);
      expect(sameBytes(target.subarray(0, 65_536), data.subarray(100_000, 165_536))).toBe(true);
      expect(target[65_536]).toBe(0xee); // nothing written past the view it was given
      expect(await store.readRangeInto(`${root}/p/blob`, 290_000, target)).toBe(10_000);
      expect(sameBytes(target.subarray(0, 10_000), data.subarray(290_000))).toBe(true);
      expect(await store.readRangeInto(`${root}/p/blob`, 300_000, target)).toBe(0);
      expect(await store.readRangeInto(`${root}/p/none`, 0, target)).toBeNull();
    },
  );

  withFixture(
    'its codec: inflate returns the data whatever the size hint says; sha1Parts, where it has one, is the SHA-1 of the parts joined',
    async (_f, store) => {
      const codec = store.codec;
      const data = new Uint8Array(20_000);
      for (let i = 0, x = 7; i < data.length; i++) data[i] = (x = (x * 1103515245 + 12345) >>> 0) >>> 24;
      const z = codec.deflate(data);
      // The right size, too small, too large, absurd (a corrupt pack entry's claim), none.
      for (const hint of [data.length, 0, 100, data.length + 1, 2 ** 40, undefined]) {
        const out = codec.inflate(z, hint);
        expect(out.length, `hint ${hint}`).toBe(data.length);
        expect(
          out.every((b, i) => b === data[i]),
          `hint ${hint}`,
        ).toBe(true);
      }
      if (codec.sha1Parts) {
        const [a, b] = [data.subarray(0, 17), data.subarray(17)];
        expect(codec.sha1Parts([a, b])).toBe(codec.sha1(data));
        expect(codec.sha1Parts([data])).toBe(codec.sha1(data));
        expect(codec.sha1Parts([])).toBe(codec.sha1(new Uint8Array(0)));
      }
    },
  );
}

/** Writing: rename over a file, create-exclusive, append, and the lock’s serialisation. */
function writeTests(withFixture: WithFixture): void {
  withFixture('renames over an existing file', async ({ root }, store) => {
    await store.writeAtomic(`${root}/x`, 'old');
    await store.writeAtomic(`${root}/x`, 'new');
    expect(text(await store.read(`${root}/x`))).toBe('new');
    expect(await store.readdir(root)).toEqual(['x']);
  });

  withFixture('creates exclusively: the second creator is told the file exists', async ({ root }, store) => {
    expect(await store.createExclusive(`${root}/d/lock`, 'one')).toBe(true);
    expect(await store.createExclusive(`${root}/d/lock`, 'two')).toBe(false);
    expect(text(await store.read(`${root}/d/lock`))).toBe('one');
    const racers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => store.createExclusive(`${root}/race`, String(i))),
    );
    expect(racers.filter(Boolean)).toHaveLength(1);
  });

  withFixture('appends, creating the file and its parents', async ({ root }, store) => {
    await store.append(`${root}/logs/x`, 'a\n');
    await store.append(`${root}/logs/x`, 'b\n');
    expect(text(await store.read(`${root}/logs/x`))).toBe('a\nb\n');
  });

  withFixture('serializes work under one lock key and not across keys', async ({ root }, store) => {
    const events: string[] = [];
    const job = (key: string, tag: string) =>
      store.lock(`${root}/${key}.lock`, async () => {
        events.push(`${tag}+`);
        await new Promise((r) => setTimeout(r, 20));
        events.push(`${tag}-`);
      });
    await Promise.all([job('k', 'a'), job('k', 'b'), job('k', 'c')]);
    expect(events).toEqual(['a+', 'a-', 'b+', 'b-', 'c+', 'c-']);
    events.length = 0;
    await Promise.all([job('p', 'p'), job('q', 'q')]);
    expect(events.slice(0, 2).sort()).toEqual(['p+', 'q+']);
  });
}

/** The git layer’s objects: ids as git gives them, a damaged object file rewritten. */
function gitObjectTests(withFixture: WithFixture): void {
  withFixture('writes objects with the ids git gives, and rewrites a damaged object file', async ({ root }, store) => {
    const objects = new ObjectStore(store, `${root}/.git`);
    const oid = await objects.write('blob', new TextEncoder().encode('hello\n'));
    expect(oid).toBe('ce013625030ba8dba906f756967f9e9ca394464a');
    expect(text((await objects.read(oid)).content)).toBe('hello\n');
    const written = objects.written;
    await objects.write('blob', new TextEncoder().encode('hello\n'));
    expect(objects.written).toBe(written);
    // An empty file where the object goes (a crash mid-write elsewhere) is not trusted.
    await store.fs.writeFile(`${root}/.git/objects/ce/013625030ba8dba906f756967f9e9ca394464a`, new Uint8Array(0));
    await expect(objects.read(oid)).rejects.toMatchObject({ code: 'OBJECT_CORRUPT' });
    await objects.write('blob', new TextEncoder().encode('hello\n'));
    expect(text((await objects.read(oid)).content)).toBe('hello\n');
    expect(objects.written).toBe(written + 1);
    await expect(objects.read('0'.repeat(40))).rejects.toMatchObject({ code: 'OBJECT_NOT_FOUND' });
    expect((await store.readdir(`${root}/.git/objects/ce`)).filter((n) => n.startsWith('tmp_'))).toEqual([]);
  });
}

/** Batches of working-tree files: bytes, parents and stats; one that cannot be written. */
function fileBatchTests(withFixture: WithFixture): void {
  for (const count of [3, 300]) {
    // A few files and many: a batch as small as a turn's, and one of a backfill's size.
    withFixture(
      `writes a batch of ${count} working-tree files: their bytes, new parent directories, each one's stat as lstat gives it, in order`,
      async ({ root }, store) => {
        const files = Array.from({ length: count }, (_, i) => ({
          path: `${root}/w/${String(i % 7).padStart(3, '0')}/${i % 2 ? 'deep/' : ''}${String(i).padStart(6, '0')}-f.json`,
          // Empty, short, multi-byte UTF-8 and 9 KB files.
          data: new TextEncoder().encode(
            i % 5 === 0
              ? ''
              : i % 5 === 1
                ? `{"i":${i}}`
                : i % 5 === 2
                  ? `"✓ ${i} 🙂"`
                  : String(i).repeat(i % 5 === 3 ? 3 : 2000),
          ),
        }));
        const stats = await store.writeFiles(files);
        expect(stats).toHaveLength(count);
        for (const [i, f] of files.entries()) {
          expect(text(await store.read(f.path)), f.path).toBe(text(f.data));
          const now = await store.fs.lstat(f.path);
          expect(stats[i]!.isFile(), f.path).toBe(true);
          expect([stats[i]!.size, stats[i]!.ino, stats[i]!.mtimeMs, stats[i]!.mtimeNs], f.path).toEqual([
            f.data.length,
            now.ino,
            now.mtimeMs,
            now.mtimeNs,
          ]);
        }
        // Written again in place, over what is there.
        const again = await store.writeFiles(
          files.slice(0, 2).map((f) => ({ path: f.path, data: new TextEncoder().encode('replaced') })),
        );
        expect(text(await store.read(files[1]!.path))).toBe('replaced');
        expect(again.map((st) => st.size)).toEqual([8, 8]);
      },
    );
  }

  withFixture(
    'a batch of working-tree files with one that cannot be written: typed, naming that file, the files before it written',
    async ({ root }, store) => {
      await store.writeAtomic(`${root}/blocker`, 'a file, not a directory');
      const ok = (i: number) => ({
        path: `${root}/w/${String(i).padStart(4, '0')}.json`,
        data: new TextEncoder().encode(`{"i":${i}}`),
      });
      for (const count of [3, 300]) {
        const files = Array.from({ length: count }, (_, i) => ok(i + count));
        const at = count - 2;
        files[at] = { path: `${root}/blocker/x.json`, data: new TextEncoder().encode('{}') };
        const err = await store.writeFiles(files).then(
          () => null,
          (e: unknown) => e,
        );
        expect(err, `${count} files`).toBeInstanceOf(EntityGitError);
        expect(err, `${count} files`).toMatchObject({
          code: 'STORAGE_ERROR',
          data: { path: `${root}/blocker/x.json` },
        });
        expect(text(await store.read(files[at - 1]!.path))).toBe(text(files[at - 1]!.data));
        expect(await store.read(files[at + 1]!.path)).toBeNull();
        expect(text(await store.read(`${root}/blocker`))).toBe('a file, not a directory');
      }
    },
  );
}

/** Refs: moved under their lock with an old-value check and a reflog, a held lock, a stale one, a damaged ref. */
function refTests(withFixture: WithFixture): void {
  withFixture('moves refs under their lock, checks the old value, appends the reflog', async ({ root }, store) => {
    const refs = new RefStore(store, `${root}/.git`, { timeoutMs: 100, staleMs: 60_000 });
    const a = 'a'.repeat(40);
    const b = 'b'.repeat(40);
    await refs.update('refs/heads/main', a, { old: null, reflog: { who, message: 'first' } });
    expect(await refs.resolve('refs/heads/main')).toBe(a);
    await expect(
      refs.update('refs/heads/main', b, { old: null, reflog: { who, message: 'stale' } }),
    ).rejects.toMatchObject({ code: 'REF_CONFLICT' });
    await refs.update('refs/heads/main', b, { old: a, reflog: { who, message: 'second' } });
    expect(await refs.resolve('refs/heads/main')).toBe(b);
    const log = text(await store.read(`${root}/.git/logs/refs/heads/main`))!
      .trim()
      .split('\n');
    expect(log.map((l) => `${l.split(' ').slice(0, 2).join(' ')} ${l.split('\t')[1]}`)).toEqual([
      `${'0'.repeat(40)} ${a} first`,
      `${a} ${b} second`,
    ]);
    // Someone else's lock is waited for, then reported; the ref is never written through.
    await store.fs.writeFile(`${root}/.git/refs/heads/main.lock`, 'held');
    await expect(refs.update('refs/heads/main', a, { old: b, reflog: { who, message: 'x' } })).rejects.toBeInstanceOf(
      EntityGitError,
    );
    await expect(refs.update('refs/heads/main', a, { old: b, reflog: { who, message: 'x' } })).rejects.toMatchObject({
      code: 'REF_LOCKED',
    });
    expect(await refs.resolve('refs/heads/main')).toBe(b);
    expect(text(await store.read(`${root}/.git/refs/heads/main.lock`))).toBe('held');
    // One left by a killed writer (older than staleMs) is taken over.
    const quick = new RefStore(store, `${root}/.git`, { timeoutMs: 100, staleMs: 150 });
    await new Promise((r) => setTimeout(r, 250));
    await quick.update('refs/heads/main', a, { old: b, reflog: { who, message: 'after stale lock' } });
    expect(await refs.resolve('refs/heads/main')).toBe(a);
    expect(await store.read(`${root}/.git/refs/heads/main.lock`)).toBeNull();
    await store.fs.writeFile(`${root}/.git/refs/heads/bad`, '');
    await expect(refs.resolve('refs/heads/bad')).rejects.toMatchObject({ code: 'REF_CORRUPT' });
  });
}
