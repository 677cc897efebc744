// `npm run bench [-- name…]`: runs the named benches, or all of them. Each bench lives in its own
// module, and when several are asked for each runs in a process of its own, so one bench's setup
// never slows another's.
import { spawnSync } from 'node:child_process';

const BENCHES: Record<string, () => Promise<{ run: () => Promise<void> }>> = {
  commit: () => import('./commit.js'),
  'project-status': () => import('./project-status.js'),
  'shadow-snapshot': () => import('./shadow-snapshot.js'),
  'shadow-growth': () => import('./shadow-growth.js'),
  memory: () => import('./memory.js'),
  replay: () => import('./replay.js'),
  backfill: () => import('./backfill.js'),
  browser: () => import('./browser.js'),
  import: () => import('./import.js'),
  'replay-app': () => import('./replay-app.js'),
  'many-sessions': () => import('./many-sessions.js'),
  'adopted-sessions': () => import('./adopted-sessions.js'),
  'disk-size': () => import('./disk-size.js'),
  'event-loop': () => import('./event-loop.js'),
  'watch-latency': () => import('./watch-latency.js'),
  langgraph: () => import('./langgraph.js'),
  search: () => import('./search.js'),
  redaction: () => import('./redaction.js'),
  'server-flood': () => import('./server-flood.js'),
  'last-turn-reread': () => import('./last-turn-reread.js'),
};

const asked = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const unknown = asked.filter((name) => !(name in BENCHES));
if (unknown.length > 0) {
  console.error(`unknown bench: ${unknown.join(', ')} (known: ${Object.keys(BENCHES).join(', ')})`);
  process.exit(2);
}
const flags = process.argv.slice(2).filter((a) => a.startsWith('-'));
const names = asked.length > 0 ? asked : Object.keys(BENCHES);
if (names.length === 1) {
  const bench = await BENCHES[names[0]!]!();
  await bench.run();
} else {
  // Several: each in a process of its own (this file, asked for that one), so no bench runs on a
  // heap, JIT state or GC history another left behind. The first to fail ends the run.
  for (const name of names) {
    const child = spawnSync(process.execPath, [...process.execArgv, process.argv[1]!, name, ...flags], {
      stdio: 'inherit',
    });
    if (child.status !== 0) {
      console.error(`bench ${name} failed (${child.signal ?? `exit ${child.status}`})`);
      process.exit(child.status || 1);
    }
  }
}
