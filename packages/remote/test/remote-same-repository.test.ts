// A repository a restore or a fetch makes is the one a sync makes: the same objects, index entries,
// config bytes, refs, HEAD and files under .git, as native git reads them, in either layout and
// with a split index. Compared with the repository it was pushed from (synced, then pushed: its
// config names the remote and it holds the remote-tracking refs, as the fetched one does).
import { MemoryDag, type Layout, SPLIT_MIN } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { fetchSession, pushSession, restoreSessions } from '@entity-git/remote';
import { writeGolden } from '@entity-git/test-utils';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, listTree, tempDir } from '../../node-fs/test/helpers.js';
import { addTurn, remoteOf, server, storage, useGitHttpServer } from './remote-helpers.js';

useGitHttpServer();

/**
 * What native git shows of a repository, and the files under its `.git`. Not compared, because
 * they differ by what made them and not by what the repository holds: where each object is kept
 * (a sync's packs and loose files, a fetch's one pack: the set of objects is compared, not
 * `git count-objects`, which counts an object kept twice twice), the mirror's record of its own
 * last sync (`entity-git-state.*`, which a fetch does not write and the next sync rebuilds), the
 * commit-graph (`objects/info/`, a cache), the name of a shared index (its hash covers the files'
 * stat data), the reflogs' lines (who moved a branch, and when), and `refs/remotes/origin/HEAD`:
 * the host's own HEAD as isomorphic-git's fetch records it, which a push does not (the session's
 * HEAD travels as the HEAD record, compared with the other remote-tracking refs).
 */
function view(dir: string) {
  const gitdir = join(dir, '.git');
  const files = listTree(gitdir)
    .filter((p) => !/^objects\/([0-9a-f]{2}\/|pack\/pack-|info\/)|^entity-git-|^refs\/remotes\/origin\/HEAD$/.test(p))
    .map((p) => p.replace(/^sharedindex\.[0-9a-f]{40}$/, 'sharedindex.*'));
  return {
    objects: git(dir, 'cat-file', '--batch-all-objects', '--batch-check=%(objectname) %(objecttype) %(objectsize)'),
    index: git(dir, 'ls-files', '-s'),
    split: files.includes('sharedindex.*'),
    config: readFileSync(join(gitdir, 'config'), 'utf8'),
    refs: git(dir, 'for-each-ref', '--format=%(refname) %(objectname)')
      .split('\n')
      .filter((l) => !l.startsWith('refs/remotes/origin/HEAD ')),
    head: readFileSync(join(gitdir, 'HEAD'), 'utf8'),
    files,
    status: git(dir, 'status', '--porcelain'),
    fsck: git(dir, 'fsck', '--strict', '--no-dangling'),
  };
}

/** A machine holding the golden session, with `extra` more turns on main, synced in `layout` and pushed. */
async function pushedMachine(sid: string, layout: Layout, extra: number) {
  const dag = new MemoryDag();
  await writeGolden(dag, { sessionId: sid });
  let leaf = 'a2';
  for (let t = 1; t <= extra; t++) leaf = await addTurn(dag, sid, t, leaf);
  if (extra > 0) await dag.setHead(sid, leaf);
  const root = tempDir();
  const mirror = createNodeMirror({ dag, root, layout });
  await mirror.sync(sid);
  server.createRepo(`sessions/${sid}.git`);
  await pushSession({ remote: remoteOf(), storage, root, sessionId: sid });
  return { dag, root, mirror, dir: mirror.repoPath(sid) };
}

describe('a restored or fetched repository is what a sync makes', () => {
  for (const [layout, extra] of [
    ['flat', 0],
    ['sharded', 0],
    // Past SPLIT_MIN index entries: the sync's split index, and the fetch's checkout writes one too.
    ['flat', Math.ceil(SPLIT_MIN / 2)],
  ] as const) {
    it(`restore, ${layout}, ${extra} more turns: the same objects, index, config, refs, HEAD and files`, async () => {
      const sid = `same-${layout}-${extra}`;
      const a = await pushedMachine(sid, layout, extra);
      const root = tempDir();
      const report = await restoreSessions({ remote: remoteOf(), storage, root, sessions: [sid] });
      expect(report.counts.restored).toBe(1);
      const restored = view(join(root, sid));
      const synced = view(a.dir);
      expect(restored).toEqual(synced);
      expect(restored.split).toBe(extra > 0);
      expect(restored.status).toBe('');
      expect(restored.fsck).toBe('');
      // The mirror over the same DAG then writes nothing, and changes nothing native git shows.
      const b = createNodeMirror({ dag: a.dag, root, layout });
      expect(await b.sync(sid)).toMatchObject({ commitsWritten: 0, branchesMoved: [] });
      expect(view(join(root, sid))).toEqual(restored);
    });
  }

  it('a fetch into a repository that is behind brings it to what a sync of the new turns makes', async () => {
    const sid = 'same-behind';
    const a = await pushedMachine(sid, 'flat', 0);
    const root = tempDir();
    await restoreSessions({ remote: remoteOf(), storage, root, sessions: [sid] });
    const leaf = await addTurn(a.dag, sid, 1, 'a2');
    await a.dag.setHead(sid, leaf);
    await a.mirror.sync(sid);
    await pushSession({ remote: remoteOf(), storage, root: a.root, sessionId: sid });
    const result = await fetchSession({ remote: remoteOf(), storage, root, sessionId: sid });
    expect(result).toMatchObject({ downloaded: true, headMoved: true, worktreeChanged: true });
    expect(view(join(root, sid))).toEqual(view(a.dir));
  });
});
