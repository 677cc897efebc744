import { createNodeMirror } from '@entity-git/node-fs';
import { execFileSync } from 'node:child_process';
import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, growingSession, tempDir } from './helpers.js';

/** Each index entry's path, blob and stat data, as `git ls-files --debug` prints them. */
function indexStats(dir: string): Map<string, { oid: string; mtime: string; ino: number; size: number }> {
  const oids = new Map(
    git(dir, 'ls-files', '-s')
      .trim()
      .split('\n')
      .map((l) => [l.split('\t')[1]!, l.split(' ')[1]!]),
  );
  const out = new Map<string, { oid: string; mtime: string; ino: number; size: number }>();
  let path = '';
  let mtime = '';
  let ino = 0;
  for (const line of git(dir, 'ls-files', '--debug').split('\n')) {
    if (line.length > 0 && !line.startsWith(' ')) path = line;
    else if (line.trim().startsWith('mtime:')) mtime = line.trim().slice('mtime:'.length).trim();
    else if (line.trim().startsWith('dev:')) ino = Number(/ino:\s*(\d+)/.exec(line)![1]);
    else if (line.trim().startsWith('size:'))
      out.set(path, { oid: oids.get(path)!, mtime, ino, size: Number(/size:\s*(\d+)/.exec(line)![1]) });
  }
  return out;
}

describe('a backfill writes its working tree beside its pack', () => {
  for (const layout of ['flat', 'sharded'] as const) {
    it(`${layout}: every file its blob's bytes, the index's stat data each file's own, the index of a turn-by-turn sync`, async () => {
      // 80 turns of 4 messages: 320 files, past the batch node-fs writes on a thread of its own.
      const { dag, turns } = growingSession('Backfilled working tree');
      await turns(80);
      const mirror = createNodeMirror({ dag, root: tempDir(), layout });
      expect(await mirror.sync('s')).toMatchObject({ commitsWritten: 80, derivation: 'full' });
      const dir = mirror.repoPath('s');
      // The same commits and index entries as a mirror that synced turn by turn.
      const grown = growingSession('Backfilled working tree');
      const other = createNodeMirror({ dag: grown.dag, root: tempDir(), layout });
      for (let t = 0; t < 80; t++) {
        await grown.turns(1);
        await other.sync('s');
      }
      const otherDir = other.repoPath('s');
      expect(git(dir, 'rev-parse', 'main')).toBe(git(otherDir, 'rev-parse', 'main'));
      expect(git(dir, 'ls-files', '-s')).toBe(git(otherDir, 'ls-files', '-s'));
      // Stat data as written: git finds nothing to look at again without refreshing the index.
      expect(git(dir, 'diff-files', '--name-only')).toBe('');
      const entries = indexStats(dir);
      expect(entries.size).toBe(321);
      for (const [path, e] of entries) {
        const file = join(dir, path);
        const st = lstatSync(file, { bigint: true });
        expect([e.ino, e.size, e.mtime], path).toEqual([
          Number(st.ino),
          Number(st.size),
          `${st.mtimeNs / 1_000_000_000n}:${st.mtimeNs % 1_000_000_000n}`,
        ]);
        expect(readFileSync(file).equals(execFileSync('git', ['cat-file', 'blob', e.oid], { cwd: dir })), path).toBe(
          true,
        );
      }
      expect(git(dir, 'status', '--porcelain')).toBe('');
      expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
      // And it goes on turn by turn from that index.
      await turns(1);
      expect(await mirror.sync('s')).toMatchObject({ commitsWritten: 1, derivation: 'extended' });
      await grown.turns(1);
      await other.sync('s');
      expect(git(dir, 'rev-parse', 'main')).toBe(git(otherDir, 'rev-parse', 'main'));
      expect(git(dir, 'diff-files', '--name-only')).toBe('');
      expect(git(dir, 'status', '--porcelain')).toBe('');
    });
  }
});
