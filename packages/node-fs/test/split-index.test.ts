import { EntityGitError, SPLIT_MIN, type Layout } from '@entity-git/core';
import { buildSplitIndex, parseIndex, readIndex, Store } from '@entity-git/git';
import { createNodeMirror, nodeStorage } from '@entity-git/node-fs';
import { readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, growingSession, tempDir } from './helpers.js';

/** A session that grows a turn of 4 messages at a time, and the layout it is mirrored in. */
function growing(layout: Layout) {
  const s = growingSession('Split');
  return { dag: s.dag, root: tempDir(), layout, turn: () => s.turns(1) };
}

const sharedIndexes = (dir: string) =>
  readdirSync(join(dir, '.git'))
    .filter((n) => n.startsWith('sharedindex.'))
    .sort();
const hasLink = (dir: string) => readFileSync(join(dir, '.git', 'index')).includes(Buffer.from('link'));
/** `git ls-files -s` as git reads the index, against the files of HEAD's tree. */
function indexMatchesHead(dir: string): void {
  const staged = git(dir, 'ls-files', '-s')
    .trim()
    .split('\n')
    .map((l) => l.replace(/ 0\t/, ' '));
  const tree = git(dir, 'ls-tree', '-r', 'HEAD')
    .trim()
    .split('\n')
    .map((l) => l.replace(/ blob /, ' ').replace('\t', ' '));
  expect(staged).toEqual(tree);
}

describe('the split index of a session repository', () => {
  for (const layout of ['flat', 'sharded'] as const) {
    it(`${layout}: from ${SPLIT_MIN} entries a turn writes only its own entries; git reads the two files as one index`, async () => {
      const s = growing(layout);
      const mirror = createNodeMirror({ dag: s.dag, root: s.root, layout });
      const dir = mirror.repoPath('s');
      const turns = Math.ceil(SPLIT_MIN / 4) + 40;
      let splitTurns = 0;
      let reshared = 0;
      let last: string[] = [];
      for (let t = 1; t <= turns; t++) {
        await s.turn();
        await mirror.sync('s');
        const entries = 4 * t + 1; // and meta.json
        expect(hasLink(dir)).toBe(entries >= SPLIT_MIN);
        if (entries < SPLIT_MIN) continue;
        splitTurns++;
        const now = sharedIndexes(dir);
        // At most the shared index in use and the one it replaced.
        expect(now.length).toBeLessThanOrEqual(2);
        if (now.join() !== last.join()) reshared++;
        last = now;
        // The index holds what the shared one lacks: less than an eighth of it, then re-shared.
        const read = (await readIndex(new Store(nodeStorage()), join(dir, '.git')))!;
        expect(read.entries).toHaveLength(entries);
        expect(read.shared).not.toBeNull();
        expect(entries - read.shared!.members.size).toBeLessThanOrEqual(read.shared!.members.size / 8);
        expect(statSync(join(dir, '.git', 'index')).size).toBeLessThan(
          statSync(join(dir, '.git', `sharedindex.${read.shared!.oid}`)).size,
        );
        if (t % 10 === 0 || t === turns) {
          indexMatchesHead(dir);
          expect(git(dir, 'status', '--porcelain')).toBe('');
        }
      }
      // A new shared index now and then, not every turn.
      expect(reshared).toBeGreaterThanOrEqual(2);
      expect(reshared).toBeLessThan(splitTurns / 3);
      expect(git(dir, 'fsck', '--strict')).toBe('');
      // A new process reads the split index from disk and goes on from it.
      await s.turn();
      expect(await createNodeMirror({ dag: s.dag, root: s.root, layout }).sync('s')).toMatchObject({
        commitsWritten: 1,
      });
      indexMatchesHead(dir);
      expect(git(dir, 'status', '--porcelain')).toBe('');
      expect(await mirror.verify('s')).toMatchObject({ ok: true, differences: [] });
    });
  }

  it('goes on from an index git wrote back whole, and rebuilds one whose shared index is gone', async () => {
    const s = growing('flat');
    const mirror = createNodeMirror({ dag: s.dag, root: s.root });
    const dir = mirror.repoPath('s');
    for (let t = 0; t < SPLIT_MIN / 4 + 5; t++) await s.turn();
    await mirror.sync('s');
    expect(hasLink(dir)).toBe(true);
    // git writes the index back whole when asked to (as when it changes an entry).
    git(dir, 'update-index', '--no-split-index');
    expect(hasLink(dir)).toBe(false);
    await s.turn();
    await mirror.sync('s');
    expect(hasLink(dir)).toBe(true);
    indexMatchesHead(dir);
    expect(git(dir, 'status', '--porcelain')).toBe('');
    // The shared index lost: the index cannot be read (typed), and the next sync writes it anew.
    for (const name of sharedIndexes(dir)) unlinkSync(join(dir, '.git', name));
    await expect(readIndex(new Store(nodeStorage()), join(dir, '.git'))).rejects.toMatchObject({
      code: 'REPO_CORRUPT',
    });
    expect(() => parseIndex(readFileSync(join(dir, '.git', 'index')), nodeStorage().codec)).toThrow(EntityGitError);
    await s.turn();
    await createNodeMirror({ dag: s.dag, root: s.root }).sync('s');
    indexMatchesHead(dir);
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(git(dir, 'fsck', '--strict')).toBe('');
  });

  it('reads a split index native git wrote, with entries replaced, deleted and added', async () => {
    const dir = tempDir();
    git(dir, 'init', '-q');
    for (let i = 0; i < 100; i++) writeFileSync(join(dir, `f${String(i).padStart(3, '0')}.txt`), `file ${i}\n`);
    git(dir, 'add', '-A');
    git(dir, '-c', 'splitIndex.maxPercentChange=100', 'update-index', '--split-index');
    writeFileSync(join(dir, 'f003.txt'), 'changed\n');
    writeFileSync(join(dir, 'f099.txt'), 'changed too\n');
    writeFileSync(join(dir, 'new.txt'), 'new\n');
    git(dir, '-c', 'splitIndex.maxPercentChange=100', 'add', 'f003.txt', 'f099.txt', 'new.txt');
    git(dir, '-c', 'splitIndex.maxPercentChange=100', 'rm', '-q', '--cached', 'f050.txt', 'f051.txt');
    expect(hasLink(dir)).toBe(true);
    const read = (await readIndex(new Store(nodeStorage()), join(dir, '.git')))!;
    const expected = git(dir, 'ls-files', '-s')
      .trim()
      .split('\n')
      .map((l) => {
        const [meta, path] = l.split('\t');
        return `${path} ${meta!.split(' ')[1]}`;
      });
    expect(read.entries.map((e) => `${e.path} ${e.oid}`)).toEqual(expected);
    expect(read.entries).toHaveLength(99);
    // Entries of the shared index were replaced and deleted: it is not one the mirror adds to.
    expect(read.shared).toBeNull();
  });

  it('refuses a link extension whose bitmap claims more bits than any index holds, at once and typed', async () => {
    const codec = nodeStorage().codec;
    const bytes = Buffer.from(buildSplitIndex([], 'ab'.repeat(20), codec));
    const link = bytes.indexOf(Buffer.from('link'));
    // The delete bitmap: 2^32 - 1 bits, its one marker word a run of ones over 2^32 - 1 words.
    bytes.writeUInt32BE(0xffffffff, link + 8 + 20);
    bytes.writeUInt32BE(0xffffffff, link + 8 + 20 + 8 + 4);
    bytes.set(Buffer.from(codec.sha1(bytes.subarray(0, bytes.length - 20)), 'hex'), bytes.length - 20);
    const gitdir = tempDir();
    writeFileSync(join(gitdir, 'index'), bytes);
    await expect(readIndex(new Store(nodeStorage()), gitdir)).rejects.toMatchObject({
      code: 'REPO_CORRUPT',
      message: expect.stringContaining('bitmap'),
    });
  });
});
