import { createNodeMirror } from '@entity-git/node-fs';
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileDag, fileDagSession, turnNodes } from './file-dag.js';
import { git, tempDir } from './helpers.js';
import { builtChild } from '@entity-git/test-utils/node-child';

describe('concurrent writers with native git maintenance running', () => {
  it('three syncing processes, a writer, and a git gc / pack-refs loop: every turn reachable exactly once', async () => {
    const base = tempDir();
    const file = join(base, 'dag.jsonl');
    const root = join(base, 'root');
    const stop = join(base, 'stop');
    const dag = FileDag.create(file, fileDagSession('shared'));
    dag.append(turnNodes('shared', 1));
    const mirror = createNodeMirror({ dag, root });
    await mirror.sync('shared');
    const dir = mirror.repoPath('shared');
    const children = Array.from({ length: 3 }, () => {
      const p = spawn(
        process.execPath,
        [builtChild(join(import.meta.dirname, 'file-dag-syncer.ts')), file, root, stop],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let out = '';
      p.stdout.on('data', (d) => (out += d));
      return new Promise<{ syncs: number; errors: string[] }>((resolve) =>
        p.on('exit', () => resolve(JSON.parse(out || '{"syncs":0,"errors":["no output"]}'))),
      );
    });
    // The turns begin once every syncer has synced once, so all three overlap the writer and gc.
    while (readdirSync(base).filter((n) => n.startsWith('stop.ready-')).length < 3)
      await new Promise((r) => setTimeout(r, 20));
    const TURNS = 40;
    let gcRuns = 0;
    for (let t = 2; t <= TURNS; t++) {
      dag.append(turnNodes('shared', t));
      if (t % 4 === 0) {
        // git gives up at once on a lock a syncer holds: asked again until it runs (a loaded
        // machine stretches every sync, so a single try may meet a lock every time).
        const cmd = t % 8 === 0 ? ['gc', '-q'] : ['pack-refs', '--all'];
        for (let attempt = 0; attempt < 50; attempt++) {
          if (spawnSync('git', cmd, { cwd: dir }).status === 0) {
            gcRuns++;
            break;
          }
          await new Promise((r) => setTimeout(r, 20));
        }
      }
      await new Promise((r) => setTimeout(r, 40));
    }
    await new Promise((r) => setTimeout(r, 500));
    writeFileSync(stop, '');
    const results = await Promise.all(children);
    expect(results.flatMap((r) => r.errors)).toEqual([]);
    expect(results.every((r) => r.syncs > 0)).toBe(true);
    expect(gcRuns).toBeGreaterThanOrEqual(8);
    await mirror.sync('shared');
    const turns = git(dir, 'log', '--format=%(trailers:key=Turn,valueonly)', 'main').trim().split(/\n+/);
    expect(turns).toEqual(Array.from({ length: TURNS }, (_, i) => String(TURNS - i)));
    // Exactly once: the reflog of main only ever moved forward, one turn or more at a time.
    const moves = git(dir, 'reflog', 'show', '--format=%H', 'refs/heads/main').trim().split('\n').reverse();
    for (let i = 1; i < moves.length; i++)
      expect(git(dir, 'merge-base', '--is-ancestor', moves[i - 1]!, moves[i]!).trim()).toBe('');
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect((await mirror.verify('shared')).ok).toBe(true);
  });
});
