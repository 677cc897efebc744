// Event loop: how long a sync in the caller's process keeps the host's event loop from
// running, measured with `perf_hooks.monitorEventLoopDelay` (1 ms resolution) during a 2,000-turn
// backfill and during a start-up reconcile of 1,000 one-turn sessions, each from an in-memory DAG
// (the worst case: no I/O in the DAG reads to give the loop a turn by accident), and during the
// first sync of a plain script: a fresh process per rep (`event-loop-child.mjs`, plain `node` on
// the built packages unless `--plain=source`), nothing warmed up, a 2,000-turn session of short
// messages — what a user's own script sees. Two contenders,
// interleaved rep by rep: `yielding` (the default, a macrotask turn every `yieldEveryMs` = 1 ms of
// work) and `no yield` (`yieldEveryMs: 0`: one synchronous run), so the cost of yielding
// is the ratio of their totals in the same run.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { MemoryDag, reconcile, type DagNode } from '../packages/core/src/index.js';
import { createNodeMirror } from '../packages/node-fs/src/index.js';
import { BASE_TIME, Conversation } from './lib/conversation.js';
import { align, failWith, fsckOr, ms, ratio, writeResults } from './lib/measure.js';

const quick = process.argv.includes('--quick');
const flag = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const TURNS = Number(flag('turns') ?? (quick ? 300 : 2000));
const SESSIONS = Number(flag('sessions') ?? (quick ? 100 : 1000));
const REPS = Number(flag('reps') ?? 2);
// `--works=plain,backfill,reconcile`: which cases run (default all three).
const WORKS = new Set((flag('works') ?? 'plain,backfill,reconcile').split(','));
// `--plain=source`: the plain script imports the TypeScript sources under the bench's loader
// instead of the built packages (`dist`, what an installed package gives a script).
const PLAIN_FROM = flag('plain') === 'source' ? 'source' : 'dist';
const fail = failWith('event-loop');

interface Sample {
  totalMs: number;
  p99Ms: number;
  maxMs: number;
  /** Ticks of a 5 ms interval during the sync (the plain script's). */
  ticks?: number;
}
// `--every=N`: the yielding mode's `yieldEveryMs` (default: the library's own default).
const EVERY = flag('every');
const MODES: Record<'yielding' | 'no yield', number | undefined> = {
  yielding: EVERY === undefined ? undefined : Number(EVERY),
  'no yield': 0,
};
type Mode = keyof typeof MODES;
type Work = 'plain' | 'backfill' | 'reconcile';

async function measured(work: () => Promise<unknown>): Promise<Sample> {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const t0 = performance.now();
  await work();
  const totalMs = performance.now() - t0;
  h.disable();
  return { totalMs, p99Ms: h.percentile(99) / 1e6, maxMs: h.max / 1e6 };
}

/** The plain script's first sync, in a process of its own (`yieldEveryMs` undefined: the default). */
function plainScript(root: string, yieldEveryMs: number | undefined): Sample & { repo: string } {
  const child = spawnSync(
    process.execPath,
    [
      ...(PLAIN_FROM === 'source' ? process.execArgv : []),
      new URL('./event-loop-child.mjs', import.meta.url).pathname,
      root,
      String(TURNS),
      yieldEveryMs === undefined ? 'default' : String(yieldEveryMs),
      PLAIN_FROM,
      String(BASE_TIME),
    ],
    { encoding: 'utf8', maxBuffer: 1 << 24 },
  );
  if (child.status !== 0) fail(`the plain script failed (${child.signal ?? `exit ${child.status}`}): ${child.stderr}`);
  return JSON.parse(child.stdout) as Sample & { repo: string };
}

function tipOf(repo: string): string {
  return execFileSync('git', ['rev-parse', 'refs/heads/main'], { cwd: repo, encoding: 'utf8' }).trim();
}

const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

export async function run(): Promise<void> {
  console.log(`load average at the start: ${load()}`);
  const dir = mkdtempSync(join(tmpdir(), 'entity-git-event-loop-'));
  try {
    const long = new MemoryDag();
    await long.createSession({ id: 'long', title: `${TURNS} turns`, created_at: BASE_TIME });
    const conv = new Conversation('long', 0xe9717);
    for (let i = 0; i < (WORKS.has('backfill') ? TURNS : 0); i++) for (const n of conv.turn()) await long.addNode(n);

    const many = new MemoryDag();
    for (let s = 0; s < (WORKS.has('reconcile') ? SESSIONS : 0); s++) {
      const id = `s${String(s).padStart(4, '0')}`;
      await many.createSession({ id, title: 'one turn', created_at: BASE_TIME + s });
      const c = new Conversation(id, s + 1);
      const nodes: DagNode[] = c.turn();
      for (const n of nodes) await many.addNode(n);
    }

    const samples: Record<Work, Record<Mode, Sample[]>> = {
      plain: { yielding: [], 'no yield': [] },
      backfill: { yielding: [], 'no yield': [] },
      reconcile: { yielding: [], 'no yield': [] },
    };
    const tips = new Map<string, string>();
    // Every rep's repositories stay until the bench ends: files created right after thousands
    // were deleted on the same file system are slow to create (see the import bench), which
    // would fall on whichever contender came next.
    for (let rep = 0; rep < REPS; rep++) {
      for (const mode of WORKS.has('plain') ? (Object.keys(MODES) as Mode[]) : []) {
        const root = join(dir, `plain-${rep}-${mode.replace(' ', '-')}`);
        const { repo, ...sample } = plainScript(root, MODES[mode]);
        samples.plain[mode].push(sample);
        fsckOr(fail, repo);
        const tip = tipOf(repo);
        if ((tips.get('plain') ?? tip) !== tip)
          fail(`plain script ${mode}: tip ${tip} differs from another run's ${tips.get('plain')}`);
        tips.set('plain', tip);
      }
      for (const mode of WORKS.has('backfill') ? (Object.keys(MODES) as Mode[]) : []) {
        const yieldEveryMs = MODES[mode];
        const root = join(dir, `backfill-${rep}-${mode.replace(' ', '-')}`);
        const mirror = createNodeMirror({ dag: long, root, ...(yieldEveryMs === undefined ? {} : { yieldEveryMs }) });
        samples.backfill[mode].push(await measured(() => mirror.sync('long')));
        const repo = mirror.repoPath('long');
        fsckOr(fail, repo);
        const tip = tipOf(repo);
        if ((tips.get('long') ?? tip) !== tip)
          fail(`backfill ${mode}: tip ${tip} differs from another run's ${tips.get('long')}`);
        tips.set('long', tip);
      }
      for (const mode of SESSIONS > 0 && WORKS.has('reconcile') ? (Object.keys(MODES) as Mode[]) : []) {
        const yieldEveryMs = MODES[mode];
        const root = join(dir, `reconcile-${rep}-${mode.replace(' ', '-')}`);
        const mirror = createNodeMirror({ dag: many, root, ...(yieldEveryMs === undefined ? {} : { yieldEveryMs }) });
        let report: Awaited<ReturnType<typeof reconcile>> | undefined;
        samples.reconcile[mode].push(
          await measured(async () => {
            report = await reconcile({ dag: many, mirror, ...(yieldEveryMs === undefined ? {} : { yieldEveryMs }) });
          }),
        );
        if (!report?.ok || report.entries.some((e) => e.action !== 'backfilled'))
          fail(`reconcile ${mode}: not every session backfilled`);
        fsckOr(fail, mirror.repoPath('s0000'));
      }
    }

    // The fastest rep: on a loaded machine the slower reps measure the neighbours.
    const best = (xs: number[]) => Math.min(...xs);
    const worst = (xs: number[]) => Math.max(...xs);
    const rows = [
      [
        'work',
        'mode',
        'total (best rep)',
        'event-loop p99 (worst rep)',
        'max (worst rep)',
        'total vs no yield',
        '5 ms ticks (best rep)',
      ],
    ];
    const label: Record<Work, string> = {
      plain: `plain script, ${TURNS} turns`,
      backfill: `backfill ${TURNS} turns`,
      reconcile: `reconcile ${SESSIONS} sessions`,
    };
    for (const work of (['plain', 'backfill', 'reconcile'] as const).filter((w) => samples[w].yielding.length > 0)) {
      for (const mode of Object.keys(MODES) as Mode[]) {
        const s = samples[work][mode];
        const total = best(s.map((x) => x.totalMs));
        const base = best(samples[work]['no yield'].map((x) => x.totalMs));
        const ticks = s.map((x) => x.ticks).filter((t) => t !== undefined);
        rows.push([
          label[work],
          mode,
          `${ms(total)} ms`,
          `${ms(worst(s.map((x) => x.p99Ms)))} ms`,
          `${ms(worst(s.map((x) => x.maxMs)))} ms`,
          ratio(total / base),
          ticks.length > 0 ? String(Math.max(...ticks)) : '-',
        ]);
      }
    }
    console.log(align(rows));
    console.log(`load average at the end: ${load()}`);
    writeResults('event-loop', { turns: TURNS, sessions: SESSIONS, reps: REPS, samples });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
