// Shadow snapshots (docs/design.md §7, "Shadow mode") on a 50,000-file work tree, 10 files changed
// per turn: a turn's two snapshots (before: nothing changed since the last turn; after: the
// turn's 10 files) against what comparable tools do (`git add -A && git write-tree && git
// commit-tree` with a fresh temporary index) and against `git add -A && git commit` with a warm
// index, in the same run, interleaved round by round so machine noise lands on all alike. Then the
// same shadow rounds again alone, with no contender's git writing just before: what the
// contenders' writes (a 4 MB index, thousands of objects) cost the snapshot that follows them.
// `--trace` also prints where an after-snapshot's time goes, step by step (shadow-trace.ts).
// `--against=<another checkout>` also takes every shadow snapshot with that checkout's code (its
// own shadow repository of the same work tree, after the same edits; which of the two goes first
// alternates round by round): a before-and-after of a change to the snapshot, in one run.
//
//   npx tsx --conditions=source bench/shadow-snapshot.ts [--trace] [--against=DIR] [--keep]
import { execFile, execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
// Relative imports: bench/ is not a workspace package (see bench/commit.ts).
import { closeShadowWatchers, ShadowRepository } from '../packages/project/src/node/index.js';
import { writeResults } from './lib/measure.js';
import { SpanRecorder } from './lib/shadow-spans.js';
import { benchProject, editTurn, IGNORED, makeTree } from './lib/shadow-tree.js';

const FILES = 50_000;
const CHANGED = 10;
const ROUNDS = 11;
const exec = promisify(execFile);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number) => x.toFixed(x < 10 ? 2 : 1);

export async function run(): Promise<void> {
  const keep = process.argv.includes('--keep');
  const trace = process.argv.includes('--trace');
  const against = process.argv.find((a) => a.startsWith('--against='))?.slice('--against='.length) ?? null;
  const { root, dir, env, git } = benchProject('shadow');
  const gitVersion = execFileSync('git', ['--version'], { encoding: 'utf8' }).trim();
  console.log(
    `shadow-snapshot bench: ${FILES.toLocaleString('en')} files (+${IGNORED.toLocaleString('en')} ignored), ${CHANGED} changed per turn, ${ROUNDS} rounds`,
  );
  console.log(
    `node ${process.version}, ${gitVersion}, ${cpus().length} cpus, load ${loadavg()[0]!.toFixed(2)}, in ${root}`,
  );
  try {
    const t0 = performance.now();
    makeTree(dir, FILES, git);
    git('status', '--porcelain');
    // The first snapshot hashes all 50,000 files: on a loaded machine longer than the default 120 s.
    const repo = await ShadowRepository.open({ root: join(root, 'shadow'), workdir: dir, timeoutMs: 1_800_000 });
    await repo.snapshot({ kind: 'before' }); // the first snapshot hashes everything, once, untimed
    const other = against === null ? null : await otherCheckout(against, join(root, 'shadow-against'), dir);
    await other?.snapshot({ kind: 'before' });
    // The fresh-index contender's own git directory, outside the tree, as comparable tools keep it.
    const freshDir = join(root, 'fresh.git');
    execFileSync('git', ['init', '-q', '--bare', freshDir], { env });
    console.log(`  setup (tree, user repo, first shadow snapshot): ${ms((performance.now() - t0) / 1000)} s, untimed`);

    const freshSnapshot = async () => {
      const index = join(root, `fresh-index-${process.hrtime.bigint()}`);
      const fenv = { ...env, GIT_DIR: freshDir, GIT_WORK_TREE: dir, GIT_INDEX_FILE: index };
      await exec('git', ['add', '-A'], { cwd: dir, env: fenv, maxBuffer: 1 << 28 });
      const tree = (await exec('git', ['write-tree'], { cwd: dir, env: fenv })).stdout.trim();
      await exec('git', ['commit-tree', tree, '-m', 'snapshot'], { cwd: dir, env: fenv });
      rmSync(index, { force: true });
    };
    const warmCommit = async (round: number) => {
      await exec('git', ['add', '-A'], { cwd: dir, env, maxBuffer: 1 << 28 });
      await exec('git', ['commit', '-q', '-m', `turn ${round}`], { cwd: dir, env });
    };

    const samples = {
      before: [] as number[],
      after: [] as number[],
      turn: [] as number[],
      fresh: [] as number[],
      warm: [] as number[],
      aloneBefore: [] as number[],
      aloneAfter: [] as number[],
      aloneTurn: [] as number[],
    };
    const time = async (f: () => Promise<unknown>) => {
      const s = performance.now();
      await f();
      return performance.now() - s;
    };
    // The host's event loop while the shadow snapshots run, as bench/event-loop.ts watches the
    // sync's: a histogram of its own per call (a histogram enabled again would count the time it
    // was off as one delay), and the same during the warm contender, whose git runs in child
    // processes while the loop waits: what this machine's load alone does to a 1 ms timer.
    const loops = { shadow: [] as number[], idle: [] as number[], sleep: [] as number[] };
    const watched = async (into: number[], f: () => Promise<unknown>) => {
      const h = monitorEventLoopDelay({ resolution: 1 });
      h.enable();
      try {
        return await time(f);
      } finally {
        h.disable();
        if (h.count > 0) into.push(h.percentile(99) / 1e6, h.max / 1e6);
      }
    };
    // Each after-snapshot's steps, interleaved and alone, when --trace asks for them.
    const spans = trace ? { interleaved: new SpanRecorder(), alone: new SpanRecorder() } : null;
    const afterSnapshot = (round: number, recorder: SpanRecorder | undefined) => () => {
      const take = () => repo.snapshot({ kind: 'after', sessionId: 'bench', turn: round + 1 });
      return recorder ? recorder.during(round > 0, take) : take();
    };
    // The other checkout's snapshot of the round beside this one's, first in odd rounds.
    const theirs = { before: [] as number[], after: [] as number[] };
    const beside = async <T>(round: number, kind: 'before' | 'after', mine: () => Promise<T>): Promise<T> => {
      const snap = async () =>
        theirs[kind].push(
          await time(() =>
            other!.snapshot(kind === 'before' ? { kind } : { kind, sessionId: 'bench', turn: round + 1 }),
          ),
        );
      if (other !== null && round % 2 === 1) await snap();
      const result = await mine();
      if (other !== null && round % 2 === 0) await snap();
      return result;
    };
    for (let round = 0; round < ROUNDS + 1; round++) {
      const shadowLoop = round === 0 ? [] : loops.shadow; // the warm-up round's loop is not counted either
      const before = await beside(round, 'before', () => watched(shadowLoop, () => repo.snapshot({ kind: 'before' })));
      editTurn(dir, FILES, CHANGED, round);
      const after = await beside(round, 'after', () => watched(shadowLoop, afterSnapshot(round, spans?.interleaved)));
      const fresh = await time(freshSnapshot);
      const warm = await watched(round === 0 ? [] : loops.idle, () => warmCommit(round));
      // And the loop with nothing to do for as long as the after-snapshot took: the timer's own delay.
      await watched(round === 0 ? [] : loops.sleep, () => new Promise((r) => setTimeout(r, Math.max(after, 20))));
      if (round === 0) continue; // warm-up
      samples.before.push(before);
      samples.after.push(after);
      samples.turn.push(before + after);
      samples.fresh.push(fresh);
      samples.warm.push(warm);
    }
    // The shadow rounds alone: no contender's git ran since the previous snapshot.
    for (let round = ROUNDS + 1; round < 2 * ROUNDS + 1; round++) {
      const before = await beside(round, 'before', () => time(() => repo.snapshot({ kind: 'before' })));
      editTurn(dir, FILES, CHANGED, round);
      const after = await beside(round, 'after', () => time(afterSnapshot(round, spans?.alone)));
      samples.aloneBefore.push(before);
      samples.aloneAfter.push(after);
      samples.aloneTurn.push(before + after);
    }
    await warmCommit(2 * ROUNDS + 1); // the user's repository catches up with the alone rounds' edits
    // The shadow repository must hold the tree the user's repository committed.
    const shadowTree = execFileSync(
      'git',
      ['--git-dir', join(repo.dir, 'git'), 'rev-parse', 'refs/heads/snapshots^{tree}'],
      {
        env,
        encoding: 'utf8',
      },
    ).trim();
    const userTree = execFileSync('git', ['rev-parse', 'HEAD^{tree}'], { cwd: dir, env, encoding: 'utf8' }).trim();
    if (shadowTree !== userTree)
      throw new Error(`the shadow snapshot's tree ${shadowTree} is not the user's ${userTree}`);
    execFileSync('git', ['--git-dir', join(repo.dir, 'git'), 'fsck', '--strict', '--no-progress'], { env });

    const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)])) as Record<
      keyof typeof samples,
      number
    >;
    const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)] ?? Math.max(...xs);
    console.log('');
    console.log('| what | median ms | p90 ms |');
    console.log('| --- | --- | --- |');
    const rows: [string, number[]][] = [
      ['shadow: before-snapshot (nothing changed since the last turn)', samples.before],
      [`shadow: after-snapshot (${CHANGED} files changed)`, samples.after],
      ['shadow: a turn (before + after)', samples.turn],
      ['fresh temporary index: git add -A && git write-tree && git commit-tree (one snapshot)', samples.fresh],
      ['warm index: git add -A && git commit (one commit)', samples.warm],
      ['shadow alone (no contender between rounds): before-snapshot', samples.aloneBefore],
      [`shadow alone: after-snapshot (${CHANGED} files changed)`, samples.aloneAfter],
      ['shadow alone: a turn (before + after)', samples.aloneTurn],
    ];
    // The other checkout's: its warm-up round (the first) left out, then interleaved, then alone.
    const theirTurns = theirs.before.map((b, i) => b + theirs.after[i]!);
    const split = (xs: number[]) => ({ interleaved: xs.slice(1, ROUNDS + 1), alone: xs.slice(ROUNDS + 1) });
    const their = { before: split(theirs.before), after: split(theirs.after), turn: split(theirTurns) };
    if (other !== null)
      rows.push(
        [`--against ${against}: a turn, interleaved`, their.turn.interleaved],
        ['--against: its after-snapshot, interleaved', their.after.interleaved],
        ['--against: a turn, alone', their.turn.alone],
        ['--against: its after-snapshot, alone', their.after.alone],
      );
    for (const [name, xs] of rows) console.log(`| ${name} | ${ms(median(xs))} | ${ms(p90(xs))} |`);
    console.log('');
    if (other !== null)
      console.log(
        `this checkout's turn / --against's: interleaved ${(m.turn / median(their.turn.interleaved)).toFixed(2)}×, alone ${(m.aloneTurn / median(their.turn.alone)).toFixed(2)}×`,
      );
    console.log(
      `shadow turn interleaved / alone: ${(m.turn / m.aloneTurn).toFixed(2)}× (what the contenders' git writes just before cost it)`,
    );
    if (spans) {
      for (const [phase, recorder] of Object.entries(spans)) {
        console.log('');
        console.log(
          `where an after-snapshot's time goes (${phase}; medians over the rounds; steps overlap, so lengths do not add up):`,
        );
        console.log('| step | starts at ms | takes ms | in snapshots |');
        console.log('| --- | --- | --- | --- |');
        for (const step of recorder.summary())
          console.log(`| ${step.name} | ${ms(step.startMs)} | ${ms(step.ms)} | ${step.count} |`);
        recorder.close();
      }
      console.log('');
    }
    console.log(`fresh index (one snapshot) / shadow turn (two snapshots): ${(m.fresh / m.turn).toFixed(1)}×`);
    console.log(`fresh index / shadow after-snapshot, snapshot for snapshot: ${(m.fresh / m.after).toFixed(1)}×`);
    console.log(`shadow after-snapshot / warm add+commit: ${(m.after / m.warm).toFixed(2)}×`);
    console.log(`shadow turn (two snapshots) / warm add+commit (one): ${(m.turn / m.warm).toFixed(2)}×`);
    // Each call pushed its p99 then its max: the worst of each over the rounds.
    const worst = (xs: number[], at: 0 | 1) => Math.max(...xs.filter((_, i) => i % 2 === at));
    // And the median call's p99: one call the machine's load stalled does not make the figure.
    const typical = (xs: number[]) => median(xs.filter((_, i) => i % 2 === 0));
    const eventLoop = {
      shadow: { p99Ms: worst(loops.shadow, 0), maxMs: worst(loops.shadow, 1), medianP99Ms: typical(loops.shadow) },
      idle: { p99Ms: worst(loops.idle, 0), maxMs: worst(loops.idle, 1), medianP99Ms: typical(loops.idle) },
      sleep: { p99Ms: worst(loops.sleep, 0), maxMs: worst(loops.sleep, 1), medianP99Ms: typical(loops.sleep) },
    };
    console.log(
      `host event loop during the shadow snapshots (worst call): p99 ${ms(eventLoop.shadow.p99Ms)} ms, max ${ms(eventLoop.shadow.maxMs)} ms; the median call's p99 ${ms(eventLoop.shadow.medianP99Ms)} ms`,
    );
    console.log(
      `the same loop waiting on the warm contender's git (the load alone): p99 ${ms(eventLoop.idle.p99Ms)} ms, max ${ms(eventLoop.idle.maxMs)} ms; the median call's p99 ${ms(eventLoop.idle.medianP99Ms)} ms`,
    );
    console.log(
      `the same loop only sleeping as long as an after-snapshot: p99 ${ms(eventLoop.sleep.p99Ms)} ms, max ${ms(eventLoop.sleep.maxMs)} ms; the median call's p99 ${ms(eventLoop.sleep.medianP99Ms)} ms`,
    );
    console.log(
      `load average at the end: ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}`,
    );
    writeResults('shadow-snapshot', {
      node: process.version,
      git: gitVersion,
      cpus: cpus().length,
      files: FILES,
      changedPerTurn: CHANGED,
      unit: 'ms',
      medians: m,
      eventLoop,
      samples,
      ...(other ? { against: { checkout: against, ...their } } : {}),
      ...(spans ? { spans: { interleaved: spans.interleaved.summary(), alone: spans.alone.summary() } } : {}),
    });
  } finally {
    closeShadowWatchers();
    for (const close of closers) close();
    if (keep) console.log(`kept ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
}

/** The shadow repository of `workdir` under `root`, opened with the code of the checkout `dir`. */
async function otherCheckout(
  dir: string,
  root: string,
  workdir: string,
): Promise<{ snapshot: ShadowRepository['snapshot'] }> {
  const entry = pathToFileURL(join(resolve(dir), 'packages/project/src/node/index.ts')).href;
  const code = (await import(entry)) as typeof import('../packages/project/src/node/index.js');
  closers.push(code.closeShadowWatchers);
  const repo = await code.ShadowRepository.open({ root, workdir, timeoutMs: 1_800_000 });
  return { snapshot: (trailers) => repo.snapshot(trailers) };
}

/** The other checkouts' watcher closers, run when the bench ends. */
const closers: (() => void)[] = [];

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
