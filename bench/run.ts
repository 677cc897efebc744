// `npm run bench [-- name…]`: runs the named benches, or all of them. Each bench lives in its own
// module and is loaded only when asked for, so one bench's setup never slows another's.
const BENCHES: Record<string, () => Promise<{ run: () => Promise<void> }>> = {
  commit: () => import('./commit.js'),
  'project-status': () => import('./project-status.js'),
  memory: () => import('./memory.js'),
  replay: () => import('./replay.js'),
  backfill: () => import('./backfill.js'),
  browser: () => import('./browser.js'),
};

const asked = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const unknown = asked.filter((name) => !(name in BENCHES));
if (unknown.length > 0) {
  console.error(`unknown bench: ${unknown.join(', ')} (known: ${Object.keys(BENCHES).join(', ')})`);
  process.exit(2);
}
for (const name of asked.length > 0 ? asked : Object.keys(BENCHES)) {
  const bench = await BENCHES[name]!();
  await bench.run();
}
