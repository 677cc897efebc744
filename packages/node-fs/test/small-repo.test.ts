// Issue 22: a small session's repository holds what git and entity-git read back, nothing more:
// no empty fan-out directory, no `description`; still a repository native git reads clean.
import { createMirror, MemoryDag } from '@entity-git/core';
import { createNodeMirror, nodeStorage } from '@entity-git/node-fs';
import { existsSync, lstatSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, listTree, tempDir } from './helpers.js';

const T0 = 1779500000;

/** A 3-turn session (user + reply), the replies ~330 characters. */
async function smallSession(): Promise<MemoryDag> {
  const dag = new MemoryDag();
  await dag.createSession({ id: 's', title: 'Small', created_at: T0 });
  let prev: string | null = null;
  for (let k = 1; k <= 6; k++) {
    const node = await dag.appendNode({
      id: `n${k}`,
      session_id: 's',
      role: k % 2 === 1 ? 'user' : 'assistant',
      content: `message ${k} `.repeat(30),
      predecessor: prev,
      created_at: T0 + k,
    });
    prev = node.id;
  }
  return dag;
}

/** What a backfilled 3-turn session repository holds, no more (`listTree` order). */
const SMALL_REPO_FILES = [
  '.git/',
  '.git/HEAD',
  '.git/config',
  '.git/entity-git-state.json',
  '.git/entity-git-state.jsonl',
  '.git/index',
  '.git/logs/',
  '.git/logs/HEAD',
  '.git/logs/refs/',
  '.git/logs/refs/heads/',
  '.git/logs/refs/heads/main',
  '.git/objects/',
  '.git/objects/pack/',
  '.git/objects/pack/pack-*.idx',
  '.git/objects/pack/pack-*.pack',
  '.git/refs/',
  '.git/refs/entity-git/',
  '.git/refs/entity-git/meta',
  '.git/refs/heads/',
  '.git/refs/heads/main',
  'messages/',
  'messages/000001-u-n1.json',
  'messages/000002-a-n2.json',
  'messages/000003-u-n3.json',
  'messages/000004-a-n4.json',
  'messages/000005-u-n5.json',
  'messages/000006-a-n6.json',
  'meta.json',
];
/**
 * Its size as `du -sb` counts it: 57,408 bytes today (45,056 of them the 11 directories; 58,143
 * before the state log's compact records), held here so it cannot grow unseen; 256 bytes over
 * it for what differs between runs (the DAG's change marker, the meta ref's commit time).
 */
const SMALL_REPO_BYTES = 57_408 + 256;

/** Every directory under `dir`, and the bytes of its files plus 4 KiB a directory (what `du -sb` says on ext4). */
function walk(dir: string): { dirs: string[]; bytes: number } {
  const dirs = [dir];
  let bytes = 4096;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = lstatSync(path);
    if (st.isDirectory()) {
      const sub = walk(path);
      dirs.push(...sub.dirs);
      bytes += sub.bytes;
    } else bytes += st.size;
  }
  return { dirs, bytes };
}

describe('a 3-turn session repository', () => {
  for (const [kind, make] of [
    ['Node mirror, backfilled', (dag: MemoryDag, root: string) => createNodeMirror({ dag, root })],
    [
      'core mirror on node-fs (loose objects)',
      (dag: MemoryDag, root: string) => createMirror({ dag, root, storage: nodeStorage() }),
    ],
  ] as const) {
    it(`${kind}: no empty directory, no description, fsck --strict and status clean`, async () => {
      const dag = await smallSession();
      const mirror = make(dag, tempDir());
      await mirror.sync('s');
      const dir = mirror.repoPath('s');
      const { dirs, bytes } = walk(dir);
      // objects/pack is the one directory made before its first file (readers list it).
      expect(dirs.filter((d) => readdirSync(d).length === 0).map((d) => d.slice(dir.length + 1))).toEqual(
        kind.startsWith('core') ? ['.git/objects/pack'] : [],
      );
      expect(readdirSync(join(dir, '.git'))).not.toContain('description');
      expect(readdirSync(join(dir, '.git', 'objects')).filter((n) => /^[0-9a-f]{2}$/.test(n)).length).toBeLessThan(30);
      expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
      expect(git(dir, 'status', '--porcelain')).toBe('');
      expect(git(dir, 'rev-list', '--count', 'main').trim()).toBe('3');
      if (kind.startsWith('Node')) {
        // Exactly these (issue 22): entity-git's state as two files at the root of .git, the
        // meta ref's objects in the backfill's pack, no reflog for the meta ref's first value.
        expect(listTree(dir).map((p) => p.replace(/pack-[0-9a-f]{40}\./, 'pack-*.'))).toEqual(SMALL_REPO_FILES);
        // Issue 22's goal is 64 KiB as `du -sb` counts (4 KiB a directory): 11 directories, 18 files.
        expect(bytes).toBeLessThanOrEqual(SMALL_REPO_BYTES);
      }
      expect(await mirror.verify('s')).toEqual({ sessionId: 's', ok: true, differences: [] });
    });
  }

  it("the meta ref's first value writes no reflog; a change of the row appends one that keeps the earlier value", async () => {
    const dag = await smallSession();
    const root = tempDir();
    const mirror = createNodeMirror({ dag, root });
    await mirror.sync('s');
    const dir = mirror.repoPath('s');
    const first = git(dir, 'rev-parse', 'refs/entity-git/meta').trim();
    expect(existsSync(join(dir, '.git', 'logs', 'refs', 'entity-git'))).toBe(false);
    await dag.updateSession('s', { title: 'Renamed' });
    await mirror.sync('s');
    const second = git(dir, 'rev-parse', 'refs/entity-git/meta').trim();
    expect(second).not.toBe(first);
    const log = readFileSync(join(dir, '.git', 'logs', 'refs', 'entity-git', 'meta'), 'utf8')
      .trim()
      .split('\n');
    expect(log).toHaveLength(1);
    expect(log[0]).toMatch(new RegExp(`^${first} ${second} .*\tentity-git: session row changed$`));
    expect(git(dir, 'reflog', 'show', '--format=%H', 'refs/entity-git/meta').trim()).toBe(second);
    expect(JSON.parse(git(dir, 'show', 'refs/entity-git/meta:session.json')).title).toBe('Renamed');
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
    expect(git(dir, 'status', '--porcelain')).toBe('');
    // Branches keep their reflogs (DESIGN §3: `git reflog` shows every move).
    expect(git(dir, 'reflog', 'show', '--format=%gs', 'main').trim()).toBe('branch: created at turn 3');
  });
});
