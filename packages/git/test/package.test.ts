import { describe, expect, it } from 'vitest';
import {
  buildCommit,
  buildTree,
  EntityGitError,
  KeyedMutex,
  memoryStorage,
  ObjectStore,
  parseCommit,
  RefStore,
  Store,
  storeFor,
  normaliseError,
  utf8,
  utf8Length,
} from '../src/index.js';

describe('@entity-git/git on its own', () => {
  it("runs the README's example: a blob, a tree, a commit and a branch in memory", async () => {
    const store = storeFor(memoryStorage());
    const gitdir = '/repo/.git';
    const objects = new ObjectStore(store, gitdir);
    const blob = await objects.write('blob', utf8('hello\n'));
    const tree = await objects.write('tree', buildTree([{ mode: '100644', name: 'hello.txt', oid: blob }]));
    const who = { name: 'A U Thor', email: 'author@example.com' };
    const signed = { ...who, time: 1700000000 };
    const commit = await objects.write(
      'commit',
      buildCommit({ tree, parents: [], author: signed, committer: signed, message: 'first\n' }),
    );
    await new RefStore(store, gitdir).update('refs/heads/main', commit, {
      old: null,
      reflog: { who, message: 'first' },
    });
    // `git hash-object` of "hello\n"; the rest follow from it.
    expect(blob).toBe('ce013625030ba8dba906f756967f9e9ca394464a');
    expect(await new RefStore(store, gitdir).resolve('refs/heads/main')).toBe(commit);
    expect(parseCommit(await objects.readTyped(commit, 'commit')).tree).toBe(tree);
  });

  it('storeFor gives one Store per storage', () => {
    const a = memoryStorage();
    expect(storeFor(a)).toBe(storeFor(a));
    expect(storeFor(a)).toBeInstanceOf(Store);
    expect(storeFor(memoryStorage())).not.toBe(storeFor(a));
  });

  it('KeyedMutex runs the callers of one key one at a time, in call order', async () => {
    const mutex = new KeyedMutex();
    const log: string[] = [];
    const job = (key: string, name: string, ms: number) =>
      mutex.run(key, async () => {
        log.push(`${name}+`);
        await new Promise((r) => setTimeout(r, ms));
        log.push(`${name}-`);
      });
    await Promise.all([job('k', 'a', 20), job('k', 'b', 1), job('other', 'c', 1)]);
    expect(log.indexOf('a-')).toBeLessThan(log.indexOf('b+'));
    expect(log.indexOf('c-')).toBeLessThan(log.indexOf('a-'));
  });

  it('normaliseError passes typed errors through and wraps anything else as STORAGE_ERROR', () => {
    const typed = new EntityGitError('REF_LOCKED', 'held');
    expect(normaliseError(typed, { code: 'STORAGE_ERROR' })).toBe(typed);
    const cause = new Error('disk gone');
    const e = normaliseError(cause, { code: 'STORAGE_ERROR', what: 'packing failed', data: { path: '/x' } });
    expect(e).toMatchObject({
      code: 'STORAGE_ERROR',
      message: '[entity-git] packing failed: disk gone',
      data: { path: '/x' },
    });
    expect(e.cause).toBe(cause);
    expect(normaliseError('bare', { code: 'STORAGE_ERROR' }).message).toBe('[entity-git] bare');
  });

  it('utf8Length is the length of the UTF-8 encoding, lone surrogates as U+FFFD', () => {
    for (const s of ['', 'abc', 'é', '€', '😀', '\ud800', 'a\udc00b', '\ud83d'])
      expect(utf8Length(s)).toBe(new TextEncoder().encode(s).length);
  });
});
