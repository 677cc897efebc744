// The plain-script case of bench/event-loop.ts, in a fresh process as a user's script runs it: a
// 2,000-turn session of short messages appended to a `MemoryDag`, `createNodeMirror` with default
// options (or `yieldEveryMs` given), and the first `sync` of the process — no warm-up, no worker
// thread started, nothing compiled before — watched by `monitorEventLoopDelay` (1 ms resolution)
// and a 5 ms interval counting its ticks. Prints the figures as JSON.
//
// `from` is `dist` (the built packages, what a script that installed them imports,
// run by plain `node`) or `source` (the TypeScript sources, under the bench's own loader).
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

// `baseTime`: bench/lib/conversation.ts's BASE_TIME, the same commit ids in every process and both forms.
const [root, turnsArg, every, from, baseTime] = process.argv.slice(2);
const pkg = (name) => new URL(`../packages/${name}/${from === 'source' ? 'src' : 'dist'}/index.js`, import.meta.url);
const { MemoryDag } = await import(pkg('core'));
const { createNodeMirror } = await import(pkg('node-fs'));
const BASE_TIME = Number(baseTime);

const turns = Number(turnsArg);
const dag = new MemoryDag();
await dag.createSession({ id: 'plain', title: 'a plain script', created_at: BASE_TIME });
let predecessor = null;
for (let i = 0; i < turns; i++) {
  const u = await dag.appendNode({
    id: `u${i}`,
    session_id: 'plain',
    role: 'user',
    content: `Question ${i}: what does this part of the code do?`,
    predecessor,
    created_at: BASE_TIME + 2 * i + 1,
  });
  const a = await dag.appendNode({
    id: `a${i}`,
    session_id: 'plain',
    role: 'assistant',
    content: `Answer ${i}: it reads the file, checks the value and returns it.`,
    predecessor: u.id,
    created_at: BASE_TIME + 2 * i + 2,
  });
  predecessor = a.id;
}
const mirror = createNodeMirror({ dag, root, ...(every === 'default' ? {} : { yieldEveryMs: Number(every) }) });
const h = monitorEventLoopDelay({ resolution: 1 });
let ticks = 0;
const interval = setInterval(() => void ticks++, 5);
h.enable();
const t0 = performance.now();
await mirror.sync('plain');
const totalMs = performance.now() - t0;
h.disable();
clearInterval(interval);
process.stdout.write(
  JSON.stringify({ totalMs, p99Ms: h.percentile(99) / 1e6, maxMs: h.max / 1e6, ticks, repo: mirror.repoPath('plain') }),
);
