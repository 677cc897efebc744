// entity-git's own files sit at the root of .git as `entity-git-*` (no directory of their
// own). A repository last written by a version before keeps them in `.git/entity-git/`: its state is
// read once and moved, and its lock names are still honoured, so an older process and this one
// never both hold "the" lock during an upgrade.
import { createMirror, createPacker } from '@entity-git/core';
import { createNodeMirror, nodeStorage } from '@entity-git/node-fs';
import { existsSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, growingSession, tempDir } from './helpers.js';

/** A synced 3-turn session whose state files are then put where the previous version kept them. */
async function legacyRepo() {
  const { dag, turns } = growingSession('Legacy');
  await turns(3);
  const root = tempDir('eg-legacy-');
  await createNodeMirror({ dag, root }).sync('s');
  const gitdir = join(root, 's', '.git');
  mkdirSync(join(gitdir, 'entity-git'));
  for (const name of ['state.json', 'state.jsonl'])
    renameSync(join(gitdir, `entity-git-${name}`), join(gitdir, 'entity-git', name));
  expect(readdirSync(gitdir).filter((n) => n.startsWith('entity-git'))).toEqual(['entity-git']);
  return { dag, turns, root, dir: join(root, 's'), gitdir };
}

/** A lock file as a live process of this host holds it (this process's pid: never judged dead). */
const holdLock = (path: string) =>
  writeFileSync(path, JSON.stringify({ pid: process.pid, host: hostname(), at: Date.now() }));

describe("entity-git's files at the root of .git", () => {
  it('a fresh repository has no .git/entity-git/ directory; its state and nothing else is entity-git-*', async () => {
    const { dag, turns } = growingSession('Fresh');
    await turns(3);
    const root = tempDir();
    await createNodeMirror({ dag, root }).sync('s');
    const gitdir = join(root, 's', '.git');
    expect(
      readdirSync(gitdir)
        .filter((n) => n.startsWith('entity-git'))
        .sort(),
    ).toEqual(['entity-git-state.json', 'entity-git-state.jsonl']);
  });

  it('reads the state a previous version left in .git/entity-git/ (nothing re-read), moves it to the root and removes the directory', async () => {
    const { dag, turns, root, dir, gitdir } = await legacyRepo();
    const tips = git(dir, 'for-each-ref', '--format=%(refname) %(objectname)');
    // A new process: the old state is trusted (no node read), and moved.
    expect(await createNodeMirror({ dag, root }).sync('s')).toMatchObject({ noop: true, nodesRead: 0 });
    expect(existsSync(join(gitdir, 'entity-git'))).toBe(false);
    expect(
      readdirSync(gitdir)
        .filter((n) => n.startsWith('entity-git'))
        .sort(),
    ).toEqual(['entity-git-state.json', 'entity-git-state.jsonl']);
    expect(await createNodeMirror({ dag, root }).sync('s')).toMatchObject({ noop: true, nodesRead: 0 });
    // And the next turn appends to the moved log.
    await turns(1);
    expect(await createNodeMirror({ dag, root }).sync('s')).toMatchObject({ commitsWritten: 1, nodesRead: 4 });
    expect(git(dir, 'for-each-ref', '--format=%(refname) %(objectname)')).not.toBe(tips);
    expect(await createNodeMirror({ dag, root }).verify('s')).toMatchObject({ ok: true, differences: [] });
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  it('a legacy state that no longer matches the refs is not trusted, and both copies are replaced by one at the root', async () => {
    const { dag, turns, root, dir, gitdir } = await legacyRepo();
    await turns(1);
    // An older process wrote state.jsonl a turn ago; the refs moved since (this process's turn).
    await createNodeMirror({ dag, root }).sync('s');
    expect(existsSync(join(gitdir, 'entity-git'))).toBe(false);
    writeFileSync(join(gitdir, 'entity-git-state.json'), '{"v":3,"config":"other"}');
    expect(await createNodeMirror({ dag, root }).sync('s')).toMatchObject({ commitsWritten: 0, nodesRead: 16 });
    expect(await createNodeMirror({ dag, root }).sync('s')).toMatchObject({ noop: true, nodesRead: 0 });
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
  });

  it('waits for the lock an older process holds (.git/entity-git/sync.lock), and takes it too while it syncs', async () => {
    const { dag, turns, root, dir, gitdir } = await legacyRepo();
    await turns(1);
    const legacyLock = join(gitdir, 'entity-git', 'sync.lock');
    holdLock(legacyLock);
    const impatient = createNodeMirror({ dag, root, syncLock: { timeoutMs: 150 } });
    await expect(impatient.sync('s')).rejects.toMatchObject({ code: 'LOCK_TIMEOUT' });
    // The new name was let go again; nothing was written.
    expect(existsSync(join(gitdir, 'entity-git-sync.lock'))).toBe(false);
    // Released while a sync waits: the sync lands.
    const waiting = createNodeMirror({ dag, root }).sync('s');
    await new Promise((r) => setTimeout(r, 100));
    rmSync(legacyLock);
    expect(await waiting).toMatchObject({ commitsWritten: 1 });

    // While this version syncs, `.git/entity-git` is a lock file of its own: an older process
    // cannot create its lock in it (ENOTDIR), so it fails (and retries later) instead of syncing too;
    // this version's node-fs takes such a lock as held, and waits (here: not at all, LOCK_TIMEOUT).
    const storage = nodeStorage();
    const seen: string[] = [];
    const older: unknown[] = [];
    const spy = {
      ...storage,
      withLock: <T>(key: string, fn: () => Promise<T>) =>
        storage.withLock(key, async () => {
          seen.push(`${key.slice(gitdir.length + 1)} ${lstatSync(key).isFile()}`);
          if (key === join(gitdir, 'entity-git'))
            older.push(
              await nodeStorage({ syncLock: { timeoutMs: 0 } })
                .withLock(legacyLock, async () => 'held')
                .catch((e) => e),
            );
          return fn();
        }),
    };
    await turns(1);
    await createMirror({ dag, root, storage: spy }).sync('s');
    expect(seen).toEqual(['entity-git-sync.lock true', 'entity-git true']);
    expect(older).toHaveLength(1);
    expect(older[0]).toMatchObject({ code: 'LOCK_TIMEOUT' });
    // Both let go: nothing of the lock is left.
    expect(
      readdirSync(gitdir)
        .filter((n) => n.startsWith('entity-git'))
        .sort(),
    ).toEqual(['entity-git-state.json', 'entity-git-state.jsonl']);

    // An older process's directory made after this one looked: its lock is taken instead.
    mkdirSync(join(gitdir, 'entity-git'));
    seen.length = 0;
    older.length = 0;
    await turns(1);
    await createMirror({ dag, root, storage: spy }).sync('s');
    expect(seen).toEqual(['entity-git-sync.lock true', 'entity-git/sync.lock true']);
    expect(existsSync(join(gitdir, 'entity-git'))).toBe(false);
    // A lock file left at .git/entity-git by a process of this version that died: taken over.
    writeFileSync(join(gitdir, 'entity-git'), JSON.stringify({ pid: 999999999, host: hostname(), at: 0 }));
    await turns(1);
    expect(await createNodeMirror({ dag, root }).sync('s')).toMatchObject({ commitsWritten: 1 });
    expect(existsSync(join(gitdir, 'entity-git'))).toBe(false);
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
  });

  it("the packer honours an older packer's .git/entity-git/pack.lock, and leaves no directory behind", async () => {
    const { gitdir } = await legacyRepo();
    const storage = nodeStorage();
    let packs = 0;
    const packer = createPacker({
      storage,
      looseObjects: 0,
      pack: async () => {
        packs++;
        expect(existsSync(join(gitdir, 'entity-git-pack.lock'))).toBe(true);
        expect(existsSync(join(gitdir, 'entity-git', 'pack.lock'))).toBe(true);
      },
    });
    writeFileSync(join(gitdir, 'entity-git', 'pack.lock'), `${Date.now()}\n`);
    expect(await packer.packNow(gitdir)).toBeNull();
    expect(existsSync(join(gitdir, 'entity-git-pack.lock'))).toBe(false);
    rmSync(join(gitdir, 'entity-git', 'pack.lock'));
    rmSync(join(gitdir, 'entity-git'), { recursive: true }); // (its state with it)
    await packer.packNow(gitdir);
    expect(packs).toBe(1);
    expect(readdirSync(gitdir).filter((n) => n.startsWith('entity-git'))).toEqual([]);
  });

  it('the packer takes a .git/entity-git removed between its making and the old lock as held: no pack, no error', async () => {
    const { gitdir } = await legacyRepo();
    rmSync(join(gitdir, 'entity-git'), { recursive: true });
    const storage = nodeStorage();
    let raced = 0;
    // A sync that found the directory empty removes it once done: here right after the packer made it.
    const racing = {
      ...storage,
      fs: {
        ...storage.fs,
        mkdir: async (path: string, o?: { recursive?: boolean }) => {
          await storage.fs.mkdir(path, o);
          if (path === join(gitdir, 'entity-git') && raced++ === 0) rmSync(path, { recursive: true });
        },
      },
    };
    let packs = 0;
    const packer = createPacker({ storage: racing, looseObjects: 0, pack: async () => void packs++ });
    expect(await packer.packNow(gitdir)).toBeNull();
    expect(raced).toBe(1);
    expect(packs).toBe(0);
    expect(readdirSync(gitdir).filter((n) => n.startsWith('entity-git'))).toEqual([]);
    // The next request packs.
    await packer.packNow(gitdir);
    expect(packs).toBe(1);
    expect(readdirSync(gitdir).filter((n) => n.startsWith('entity-git'))).toEqual([]);
  });
});
