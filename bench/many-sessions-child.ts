// The start-up check of bench/many-sessions.ts in a process of its own, as an application starting
// up runs it: open the database, one reconcile, then print the time and the kernel's high-water
// mark of this process's resident set (VmHWM), so nothing the bench did before counts.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { reconcile } from '../packages/core/src/index.js';
import { createNodeMirror } from '../packages/node-fs/src/index.js';
import { openSqlite } from '../packages/sqlite/src/index.js';

const [file, root] = process.argv.slice(2);
const hwm = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) * 1024;
const store = await openSqlite({ file: file! });
const base = hwm();
const t0 = performance.now();
const report = await reconcile({ dag: store.dag, mirror: createNodeMirror({ dag: store.dag, root: root! }) });
const ms = performance.now() - t0;
await store.close();
process.stdout.write(
  JSON.stringify({
    ms,
    base,
    peak: hwm(),
    unchanged: report.entries.filter((e) => e.action === 'unchanged').length,
    total: report.total,
  }),
);
