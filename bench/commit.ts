// Per-turn commit cost of a session repository (DESIGN.md §3 "Cost"): entity-git's mirror.sync
// against the git CLI on the same files, and against the least any implementation must do.
// The three run interleaved turn by turn, so machine noise lands on all of them alike.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Layout } from '../packages/core/src/index.js';
import { TURN_FILES } from './lib/conversation.js';
import { fail, measure, TIMED_TURNS, WARMUP_TURNS, type SizeResult } from './lib/commit-size.js';
import { diskTable, table } from './lib/commit-tables.js';
import { int, ms, writeResults } from './lib/measure.js';

// 1,000 messages is the design's reference size; 100 and 10,000 show how the cost grows with
// history, in both layouts. `--quick` leaves out the 10,000-message sessions.
const ALL_SIZES: { messages: number; layout: Layout }[] = [
  { messages: 1000, layout: 'flat' },
  { messages: 100, layout: 'flat' },
  { messages: 10_000, layout: 'flat' },
  { messages: 100, layout: 'sharded' },
  { messages: 1000, layout: 'sharded' },
  { messages: 10_000, layout: 'sharded' },
];

/**
 * One size, in this process: what a child runs (`--size=<layout>:<messages>`), printing its
 * result as the last line of its output.
 */
async function runOne(spec: string): Promise<void> {
  const [layout, messages] = spec.split(':');
  const keep = process.argv.includes('--keep');
  const dir = mkdtempSync(join(tmpdir(), 'entity-git-bench-'));
  try {
    const r = await measure(dir, Number(messages), layout as Layout);
    console.log(
      `  ${r.layout}, ${int(r.messagesStart)} → ${int(r.messagesEnd)} messages: backfill ${ms(r.backfillMs)} ms (untimed), native = add ${ms(r.native.addMedian)} + commit ${ms(r.native.commitMedian)} ms, floor's writeFileSync ${ms(r.floor.writeMedian)} ms; fsck/status/tree checks passed${keep ? `; kept ${dir}` : ''}`,
    );
    console.log(`${RESULT}${JSON.stringify(r)}`);
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

const RESULT = 'RESULT ';

export async function run(): Promise<void> {
  const one = process.argv.find((a) => a.startsWith('--size='));
  if (one !== undefined) return runOne(one.slice('--size='.length));
  const gitVersion = execFileSync('git', ['--version'], { encoding: 'utf8' }).trim();
  console.log(
    `commit bench: ms per turn of ${TURN_FILES} files, ${TIMED_TURNS} turns (after ${WARMUP_TURNS} warm-up), interleaved entity-git / native / floor; each size in a process of its own`,
  );
  console.log(`node ${process.version}, ${gitVersion}, ${cpus().length} cpus, in ${tmpdir()}`);
  const results: SizeResult[] = [];
  const only = process.argv.find((a) => a.startsWith('--layout='))?.slice('--layout='.length);
  const sizes = ALL_SIZES.filter(
    (x) => (only === undefined || x.layout === only) && (!process.argv.includes('--quick') || x.messages < 10_000),
  );
  for (const size of sizes) {
    // A process per size: one size's heap, caches and files never weigh on the next one's turns.
    const child = spawnSync(
      process.execPath,
      [
        ...process.execArgv,
        process.argv[1]!,
        'commit',
        `--size=${size.layout}:${size.messages}`,
        ...process.argv.filter((a) => a === '--keep'),
      ],
      { encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const lines = child.stdout.trim().split('\n');
    const last = lines.at(-1) ?? '';
    if (child.status !== 0 || !last.startsWith(RESULT))
      fail(`the ${size.layout} ${size.messages}-message size failed (exit ${child.status}):\n${child.stdout}`);
    for (const line of lines.slice(0, -1)) console.log(line);
    results.push(JSON.parse(last.slice(RESULT.length)) as SizeResult);
  }
  console.log('');
  console.log(table(results));
  console.log('');
  console.log(
    'native/entity-git > 1: entity-git is faster than the git CLI; entity-git/floor: what the mirror costs over bare hashing+deflate+write;',
  );
  console.log("vs own 100: the per-turn cost at this size over the same layout's at 100 messages;");
  console.log(
    "loose turns: the same mirror with packTurns: false (each object a loose file), interleaved too; loose/pack > 1: the turn's pack is cheaper",
  );
  console.log('');
  console.log('disk (objects/ only, after the timed turns; packed copies made after the run):');
  console.log(diskTable(results));

  writeResults('commit', {
    node: process.version,
    git: gitVersion,
    cpus: cpus().length,
    platform: `${process.platform}-${process.arch}`,
    turnFiles: TURN_FILES,
    unit: 'ms per turn',
    results,
  });
}
