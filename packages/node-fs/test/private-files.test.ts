// Session repositories are created private whatever the umask: 0700 directories, 0600 files, so
// another local user cannot read a conversation from the disk. Run with umask 000, the worst case.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createNodeMirror, nodeStorage } from '../src/index.js';
import { MemoryDag } from '@entity-git/core';
import { GOLDEN_SESSION, writeGolden } from '@entity-git/test-utils';

const SID = GOLDEN_SESSION.id;

let dir = '';
let umask = 0;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'eg-private-'));
  umask = process.umask(0);
});
afterEach(() => {
  process.umask(umask);
  rmSync(dir, { recursive: true, force: true });
});

/** Every path under `root` (itself included) with its permission bits, as `path mode`. */
function modes(root: string): string[] {
  const out: string[] = [];
  const walk = (p: string) => {
    const st = statSync(p);
    out.push(`${st.isDirectory() ? 'd' : 'f'} ${(st.mode & 0o777).toString(8)}`);
    if (st.isDirectory()) for (const e of readdirSync(p)) walk(join(p, e));
  };
  walk(root);
  return [...new Set(out)].sort();
}

describe('private session repositories', () => {
  it('a mirror synced under umask 000 leaves only 0700 directories and 0600 files, and native git reads it', async () => {
    const root = join(dir, 'sessions');
    const dag = new MemoryDag({ now: () => 1779600000 });
    await writeGolden(dag);
    const mirror = createNodeMirror({ dag, root });
    await mirror.sync(SID);
    expect(modes(root)).toEqual(['d 700', 'f 600']);
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: mirror.repoPath(SID), encoding: 'utf8' })).toBe('');
  });

  it("the storage's own writes (exclusive create, append, durable write, locks) are 0600 under umask 000", async () => {
    for (const fsync of [false, true]) {
      const s = nodeStorage({ fsync });
      const base = join(dir, `f${fsync}`);
      await s.fs.mkdir(base);
      await s.fs.writeFile(join(base, 'w'), 'x');
      await s.createExclusive!(join(base, 'x'), 'x');
      await s.appendFile!(join(base, 'a'), 'x');
      let lockMode = '';
      await s.withLock!(join(base, 'locks', 'k.lock'), async () => {
        lockMode = (statSync(join(base, 'locks', 'k.lock')).mode & 0o777).toString(8);
      });
      expect([lockMode, ...modes(base)]).toEqual(['600', 'd 700', 'f 600']);
    }
  });
});
