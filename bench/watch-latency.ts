// Watch latency (issue 20): from a turn committed to the database by another program to its git
// commit, through `entity-git watch` itself (`runWatch`, its default 100 ms data_version poll).
// The writer is the Python sqlite3 application of the CLI's tests, writing 10 turns a second
// round-robin across 20 sessions (each turn one transaction: a user message and its answer); it
// prints the wall-clock time after each commit. The watch prints a `committed` line per sync; the
// latency of a turn is the time of the first line that brings its session's commit count to it.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runWatch } from '../packages/cli/src/commands/watch.js';
import { openContext } from '../packages/cli/src/context.js';
import { align, failWith, fsckOr, ms, writeResults } from './lib/measure.js';

const quick = process.argv.includes('--quick');
const SESSIONS = 20;
const TURNS = quick ? 3 : 15; // per session: 300 turns, 30 s at 10 turns/s
const PAUSE_S = 0.1;
const WRITER = new URL('../packages/cli/test/fixtures/python_writer.py', import.meta.url).pathname;
const fail = failWith('watch-latency');

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'entity-git-watch-latency-'));
  try {
    const db = join(dir, 'app.db');
    // The application's database exists (one turn each) before the watch starts.
    await new Promise<void>((resolve, reject) =>
      spawn('python3', [WRITER, db, String(SESSIONS), '1', '0']).on('close', (c) =>
        c === 0 ? resolve() : reject(new Error(`writer exit ${c}`)),
      ),
    );
    const root = join(dir, 'sessions');
    // The context `entity-git watch --db FILE --root DIR` opens: entity-git's schema, read-only.
    const ctx = await openContext({ db, root, readOnly: true, cwd: process.cwd() });
    const mirrored = new Map<string, number>();
    const committedAt = new Map<string, number[]>(); // session → time at which turn k was first in git
    let out = '';
    const io = {
      stdout: {
        write(chunk: string) {
          out += chunk;
          let nl: number;
          while ((nl = out.indexOf('\n')) >= 0) {
            const line = JSON.parse(out.slice(0, nl)) as { event: string; sessionId?: string; commits?: number };
            out = out.slice(nl + 1);
            if (line.event !== 'committed') continue;
            const now = Date.now();
            const total = (mirrored.get(line.sessionId!) ?? 0) + line.commits!;
            mirrored.set(line.sessionId!, total);
            const times = committedAt.get(line.sessionId!) ?? [];
            while (times.length < total) times.push(now);
            committedAt.set(line.sessionId!, times);
          }
          return true;
        },
      },
      stderr: { write: (c: string) => process.stderr.write(c) },
    };
    const watching = runWatch(ctx, io, { json: true, db });
    while (![...mirrored.values()].length || [...mirrored.values()].reduce((a, b) => a + b, 0) < SESSIONS)
      await new Promise((r) => setTimeout(r, 50));

    const written = new Map<string, number[]>();
    const writer = spawn('python3', [WRITER, db, String(SESSIONS), String(TURNS + 1), String(PAUSE_S)]);
    let wout = '';
    writer.stdout.setEncoding('utf8').on('data', (c: string) => {
      wout += c;
      let nl: number;
      while ((nl = wout.indexOf('\n')) >= 0) {
        const [sid, t, at] = wout.slice(0, nl).split(' ');
        wout = wout.slice(nl + 1);
        if (at === undefined) continue;
        const list = written.get(sid!) ?? [];
        list[Number(t)] = Number(at);
        written.set(sid!, list);
      }
    });
    const code = await new Promise<number | null>((r) => writer.on('close', r));
    if (code !== 0) fail(`the writer exited ${code}`);
    for (
      const end = Date.now() + 120_000;
      [...mirrored.values()].reduce((a, b) => a + b, 0) < SESSIONS * (TURNS + 1);
    ) {
      if (Date.now() > end) fail('the watch did not mirror every turn within 120 s');
      await new Promise((r) => setTimeout(r, 50));
    }
    process.emit('SIGTERM');
    await watching;
    await ctx.close();

    const latencies: number[] = [];
    for (const [sid, times] of written) {
      for (let t = 1; t < times.length; t++) latencies.push(committedAt.get(sid)![t]! - times[t]!);
    }
    for (let s = 0; s < SESSIONS; s++) fsckOr(fail, join(root, `py-${s}`));
    latencies.sort((a, b) => a - b);
    const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)]!;
    console.log(
      align([
        ['turns', 'sessions', 'rate', 'median', 'p90', 'p99', 'max'],
        [
          String(latencies.length),
          String(SESSIONS),
          `${(1 / PAUSE_S).toFixed(0)}/s`,
          `${ms(pct(50))} ms`,
          `${ms(pct(90))} ms`,
          `${ms(pct(99))} ms`,
          `${ms(latencies.at(-1)!)} ms`,
        ],
      ]),
    );
    writeResults('watch-latency', {
      sessions: SESSIONS,
      turnsPerSession: TURNS,
      pauseS: PAUSE_S,
      latenciesMs: latencies,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
