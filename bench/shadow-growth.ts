// Bounded growth of a shadow repository (docs/design.md §7, "Shadow mode"): the disk after N turns
// (default 1,000) that each change 10 files of a 50,000-file tree, with the default keep-100
// pruning and repack, against the same history in plain git (one `git add` + `git commit` per
// turn in the tree's own repository, then `git gc`). Each turn goes through `ShadowProjectGit`'s
// `beforeTurn` and `afterTurn`, as a bound session's would.
//
//   npx tsx --conditions=source bench/shadow-growth.ts [--files=50000] [--turns=1000] [--changed=10] [--keep]
import { execFileSync } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
// Relative imports: bench/ is not a workspace package (see bench/commit.ts).
import {
  closeShadowWatchers,
  DEFAULT_KEEP_TURNS,
  ShadowProjectGit,
  ShadowRepository,
  turnRef,
} from '../packages/project/src/node/index.js';
import { align, failWith, fsckOr, int, mb, writeResults } from './lib/measure.js';
import { benchProject, editTurn, makeTree } from './lib/shadow-tree.js';

const flag = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const FILES = Number(flag('files') ?? 50_000);
const TURNS = Number(flag('turns') ?? 1_000);
const CHANGED = Number(flag('changed') ?? 10);
const fail = failWith('shadow-growth');

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
/** A turn's cost: its median (no prune) and its mean (the prunes spread over every turn). */
const perTurn = (xs: readonly number[]) =>
  `median ${median(xs).toFixed(0)} ms, mean ${(sum(xs) / xs.length).toFixed(0)} ms a turn`;
const du = (flag: string, dir: string) => Number(execFileSync('du', [flag, dir], { encoding: 'utf8' }).split('\t')[0]);
const turnsHeld = (git: (...args: string[]) => string, shadowDir: string) =>
  git('--git-dir', shadowDir, 'for-each-ref', '--format=%(refname)', 'refs/turns/')
    .split('\n')
    .filter((r) => r.endsWith('/after')).length;
const disk = (dir: string) => ({ bytes: du('-sb', dir), blocks: du('-sk', dir) * 1024 });

export async function run(): Promise<void> {
  const { root, dir, git } = benchProject('shadow-growth');
  console.log(
    `shadow-growth bench: ${int(FILES)} files, ${int(TURNS)} turns of ${CHANGED} changed files, keep ${DEFAULT_KEEP_TURNS} turns`,
  );
  console.log(
    `node ${process.version}, ${git('--version').trim()}, ${cpus().length} cpus, load ${loadavg()[0]!.toFixed(2)}, in ${root}`,
  );
  try {
    let s = performance.now();
    makeTree(dir, FILES, git);
    const shadowRoot = join(root, 'shadow');
    // The first snapshot hashes every file once, untimed as the plain repository's first commit
    // is: on a loaded machine longer than a git command's default 120 s.
    const first = await ShadowRepository.open({ root: shadowRoot, workdir: dir, timeoutMs: 1_800_000 });
    await first.snapshot({ kind: 'before' });
    // What the first snapshot leaves before any turn packs it: every file a loose object.
    const loose = disk(join(first.dir, 'git'));
    console.log(
      `  setup (tree, its first commit, the first shadow snapshot): ${((performance.now() - s) / 1000).toFixed(0)} s`,
    );
    const projectGit = new ShadowProjectGit({ root: shadowRoot });
    const shadowTurns: number[] = [];
    const plainTurns: number[] = [];
    // Untimed, after each turn: how many turns the shadow repository holds (a drop: that turn
    // pruned) and its size, so the bound is seen at every turn, not only at the end.
    const pruneTurns: number[] = [];
    let held = 0;
    let peak = { bytes: 0, blocks: 0 };
    let shadowDir = '';
    const t0 = performance.now();
    for (let turn = 1; turn <= TURNS; turn++) {
      s = performance.now();
      const snapshot = await projectGit.beforeTurn(dir);
      const paths = editTurn(dir, FILES, CHANGED, turn);
      const input = {
        workdir: dir,
        sessionId: 'growth',
        turn,
        userMessage: `turn ${turn}`,
        model: 'm',
        touchedPaths: paths,
        snapshot,
      };
      await projectGit.afterTurn(input);
      shadowTurns.push(performance.now() - s);
      s = performance.now();
      git('add', '--', ...paths);
      git('commit', '-q', '-m', `turn ${turn}`);
      plainTurns.push(performance.now() - s);
      shadowDir ||= join(shadowRoot, readdirSync(shadowRoot)[0]!, 'git');
      const now = turnsHeld(git, shadowDir);
      if (now < held + 1) pruneTurns.push(turn);
      if (now < Math.min(turn, DEFAULT_KEEP_TURNS)) fail(`turn ${turn}: ${now} turns held, fewer than kept`);
      held = now;
      const size = disk(shadowDir);
      if (size.bytes > peak.bytes) peak = size;
      if (turn % 50 === 0)
        console.log(
          `  turn ${int(turn)}: ${((performance.now() - t0) / 1000).toFixed(0)} s, load ${loadavg()[0]!.toFixed(2)}`,
        );
    }
    const shadowMs = sum(shadowTurns);
    const plainMs = sum(plainTurns);
    // The last prune leaves at most a tenth more than kept: one more brings it to exactly the newest 100.
    s = performance.now();
    const pruned = await projectGit.pruneSnapshots(dir);
    const finalPruneMs = performance.now() - s;
    const plainBefore = disk(join(dir, '.git'));
    s = performance.now();
    git('gc', '--prune=now', '--quiet');
    const gcMs = performance.now() - s;
    const shadow = disk(shadowDir);
    const plain = disk(join(dir, '.git'));
    fsckOr(fail, shadowDir);
    fsckOr(fail, dir);
    const kept = turnsHeld(git, shadowDir);
    if (kept !== pruned.kept) fail(`${kept} turns' refs, the prune kept ${pruned.kept}`);
    // The newest turn's after-snapshot holds the tree the plain repository committed last.
    const newest = `${turnRef('growth', TURNS, 'after')}^{tree}`;
    if (git('--git-dir', shadowDir, 'rev-parse', newest).trim() !== git('rev-parse', 'HEAD^{tree}').trim())
      fail('the newest snapshot is not the tree the plain repository committed');

    console.log('');
    console.log(
      align([
        ['repository', 'bytes (du -sb)', 'blocks (du -sk)', 'turns held', 'time over the turns'],
        [
          'shadow, keep 100, pruned + repacked',
          mb(shadow.bytes),
          mb(shadow.blocks),
          int(kept),
          `${(shadowMs / 1000).toFixed(1)} s (both snapshots, refs, prunes): ${perTurn(shadowTurns)}`,
        ],
        [
          'plain git, after git gc',
          mb(plain.bytes),
          mb(plain.blocks),
          int(TURNS),
          `${(plainMs / 1000).toFixed(1)} s (add + commit): ${perTurn(plainTurns)}; gc ${(gcMs / 1000).toFixed(1)} s`,
        ],
        ['plain git, before git gc', mb(plainBefore.bytes), mb(plainBefore.blocks), int(TURNS), '-'],
      ]),
    );
    console.log('');
    console.log(
      `shadow / plain git after gc: ${(shadow.bytes / plain.bytes).toFixed(2)}x bytes, ${(shadow.blocks / plain.blocks).toFixed(2)}x blocks; final prune ${(finalPruneMs / 1000).toFixed(1)} s`,
    );
    const pruning = new Set(pruneTurns);
    const withPrune = shadowTurns.filter((_, i) => pruning.has(i + 1));
    const without = shadowTurns.filter((_, i) => !pruning.has(i + 1));
    console.log(
      `the first snapshot, loose: ${mb(loose.bytes)} (${mb(loose.blocks)} in blocks); the first turn (which packs it) ${(shadowTurns[0]! / 1000).toFixed(1)} s`,
    );
    console.log(
      `${pruneTurns.length} turns pruned (held > ${DEFAULT_KEEP_TURNS} + a tenth): median ${median(withPrune).toFixed(0)} ms a turn with its prune, ${median(without).toFixed(0)} ms without; the prunes ${(((sum(withPrune) - median(without) * withPrune.length) / shadowMs) * 100).toFixed(0)} % of the shadow's time; peak ${mb(peak.bytes)} (${mb(peak.blocks)} in blocks) after a turn`,
    );
    writeResults('shadow-growth', {
      files: FILES,
      turns: TURNS,
      changed: CHANGED,
      shadow,
      plain,
      plainBefore,
      kept,
      shadowMs,
      plainMs,
      shadowTurns,
      plainTurns,
      gcMs,
      finalPruneMs,
      pruneTurns,
      peak,
      loose,
    });
  } finally {
    closeShadowWatchers();
    if (process.argv.includes('--keep')) console.log(`kept ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
