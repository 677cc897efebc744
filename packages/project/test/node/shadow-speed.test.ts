// The snapshot's synchronous file system calls let the host's event loop turn: a callback the
// host queued runs between them once they have held the loop for a slice, not after all of them;
// and their errors reject as node:fs/promises' would. And a snapshot's steps, published on the
// trace channel for whoever listens (bench/shadow-snapshot.ts --trace). And the index-behind
// mark, made once rather than written again every turn; and the directories' states kept from one
// fast snapshot to the next, forgotten when the shadow repository's info/exclude changes.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, describe, expect, it } from 'vitest';
import { closeShadowWatchers, ShadowRepository } from '../../src/node/index.js';
import { readFile, sliced, writeFile } from '../../src/node/shadow-sliced-fs.js';
import { SHADOW_TRACE_CHANNEL, type ShadowSpan } from '../../src/node/shadow-trace.js';
import { isolateGit, judge } from './judge.js';

isolateGit();
afterAll(() => closeShadowWatchers());

/** A call that holds the thread for `ms` (as a slow disk would), then says it ran. */
const holding = (ms: number, log: string[], name: string) => () => {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: the loop cannot turn
  }
  log.push(name);
};

describe('the shadow snapshot sliced file system calls', () => {
  it('let the event loop turn between calls that hold it, in order', async () => {
    const log: string[] = [];
    // Twenty calls started at once, each holding the loop 0.5 ms: 10 ms in all, however slow the
    // machine (a slower one only holds longer), so the host's callback cannot wait for all.
    const calls = Array.from({ length: 20 }, (_, i) => sliced(holding(0.5, log, `call ${i}`)));
    setImmediate(() => log.push('host'));
    await Promise.all(calls);
    const host = log.indexOf('host');
    expect(host).toBeGreaterThan(0);
    expect(host).toBeLessThan(log.length - 1);
    // The calls themselves ran in the order they were made.
    expect(log.filter((x) => x !== 'host')).toEqual(Array.from({ length: 20 }, (_, i) => `call ${i}`));
  });

  it('rejects with the file system error, and writes private files', async () => {
    const dir = await judge.tempDir();
    await expect(readFile(join(dir, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });
    await writeFile(join(dir, 'f'), 'bytes\n');
    expect(await readFile(join(dir, 'f'), 'utf8')).toBe('bytes\n');
    expect((await stat(join(dir, 'f'))).mode & 0o777).toBe(0o600);
  });
});

describe('the shadow snapshot trace', () => {
  it('names every step of an in-process after-snapshot, each inside the whole, and nothing when nobody listens', async () => {
    const workdir = await judge.tempDir();
    await judge.write(join(workdir, 'src', 'a.txt'), 'a0\n');
    const repo = await ShadowRepository.open({ root: await judge.tempDir(), workdir });
    await repo.snapshot({ kind: 'before' }); // a walk: the watcher starts
    await repo.snapshot({ kind: 'before' }); // nothing changed: the tip again
    const spans: ShadowSpan[] = [];
    const listen = (message: unknown) => spans.push(message as ShadowSpan);
    await judge.write(join(workdir, 'src', 'a.txt'), 'a1\n');
    subscribe(SHADOW_TRACE_CHANNEL, listen);
    try {
      await repo.snapshot({ kind: 'after', sessionId: 's', turn: 1 });
    } finally {
      unsubscribe(SHADOW_TRACE_CHANNEL, listen);
    }
    await judge.write(join(workdir, 'src', 'a.txt'), 'a2\n');
    await repo.snapshot({ kind: 'after', sessionId: 's', turn: 2 });
    expect(spans.map((s) => s.name).sort()).toEqual(
      [
        'begin',
        'clear-dead-locks',
        'commit',
        'exclude-identity',
        'held',
        'in-process',
        'index-identity',
        'loose-tip',
        'mark',
        'plan',
        'plan.paths',
        'plan.writes',
        'ref',
        'remember',
        'snapshot',
        'tip-commit',
        'watcher',
        'watcher.barrier-event',
        'watcher.barrier-rm',
        'watcher.barrier-write',
        'watcher.drain',
        'watcher.roots',
      ].sort(),
    );
    const whole = spans.find((s) => s.name === 'snapshot')!;
    for (const s of spans) {
      expect(s.start).toBeGreaterThanOrEqual(whole.start);
      expect(s.start + s.ms).toBeLessThanOrEqual(whole.start + whole.ms);
    }
  });

  it('makes the index-behind mark once: it names the tip the index was left at, turn after turn', async () => {
    const workdir = await judge.tempDir();
    await judge.write(join(workdir, 'a.txt'), 'a0\n');
    const repo = await ShadowRepository.open({ root: await judge.tempDir(), workdir });
    const walked = await repo.snapshot({ kind: 'before' }); // a walk: the index is at this tip
    const mark = join(repo.dir, 'index-behind');
    const tips: string[] = [];
    for (const turn of [1, 2, 3]) {
      await judge.write(join(workdir, 'a.txt'), `a${turn}\n`);
      tips.push((await repo.snapshot({ kind: 'after', sessionId: 's', turn })).commit);
      expect(await readFile(mark, 'utf8')).toBe(`${walked.commit}\n`);
    }
    expect(new Set([walked.commit, ...tips]).size).toBe(4);
  });

  it('forgets the directories it knew when info/exclude changes, which no watch covers', async () => {
    const workdir = await judge.tempDir();
    await judge.write(join(workdir, 'src', 'a.txt'), 'a0\n');
    const repo = await ShadowRepository.open({ root: await judge.tempDir(), workdir });
    await repo.snapshot({ kind: 'before' }); // a walk: the watcher starts
    await judge.write(join(workdir, 'src', 'a.txt'), 'a1\n');
    await repo.snapshot({ kind: 'after', sessionId: 's', turn: 1 }); // in-process: src/ is known now
    await judge.write(join(repo.dir, 'git', 'info', 'exclude'), 'secret*\n');
    await judge.write(join(workdir, 'src', 'secret.txt'), 'kept out\n');
    await judge.write(join(workdir, 'src', 'plain.txt'), 'kept\n');
    const spans: ShadowSpan[] = [];
    const listen = (message: unknown) => spans.push(message as ShadowSpan);
    subscribe(SHADOW_TRACE_CHANNEL, listen);
    const turn = await repo.snapshot({ kind: 'after', sessionId: 's', turn: 2 }).finally(() => {
      unsubscribe(SHADOW_TRACE_CHANNEL, listen);
    });
    // In-process, on what it knew of src/ (a walk would read info/exclude anew in any case).
    expect(spans.map((s) => s.name)).toContain('in-process');
    expect(spans.map((s) => s.name)).not.toContain('git');
    const files = await judge.git(
      workdir,
      `--git-dir=${join(repo.dir, 'git')}`,
      'ls-tree',
      '-r',
      '--name-only',
      turn.commit,
    );
    expect(files.trim().split('\n')).toEqual(['src/a.txt', 'src/plain.txt']);
  });
});
