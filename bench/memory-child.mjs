// The child of bench/memory.ts: one sync of a session whose third node is the tool output in
// `<dir>/big.json`, run on the compiled library (packages/*/dist, built by `tsc -b`) as a user's
// program runs it, so the figure holds no TypeScript loader. Prints { base, peak, ms } in bytes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createNodeMirror } from '../packages/node-fs/dist/index.js';

const dir = process.argv[2];
const session = {
  id: 's',
  title: null,
  agent_id: null,
  model: null,
  project_id: null,
  head: null,
  created_at: 1,
  metadata: null,
};
const small = (id, seq, role, predecessor) => ({
  id,
  session_id: 's',
  seq,
  role,
  content: id,
  predecessor,
  caller: null,
  created_at: seq,
  metadata: null,
});
// The DAG is served from a file, as a database would: the node exists only once it is read.
const dag = {
  listSessions: async () => ['s'],
  getSession: async () => session,
  getHead: async () => null,
  async *nodesAfter(_id, after = 0) {
    if (after < 1) yield small('u', 1, 'user', null);
    if (after < 2) yield small('a', 2, 'assistant', 'u');
    if (after < 3) yield JSON.parse(readFileSync(join(dir, 'big.json'), 'utf8'));
    if (after < 4) yield small('b', 4, 'assistant', 't');
  },
};
globalThis.gc?.();
const base = process.memoryUsage().rss;
const t0 = performance.now();
await createNodeMirror({ dag, root: join(dir, 'root') }).sync('s');
const ms = performance.now() - t0;
// The kernel's high-water mark of this process's resident set, not a sampled value: VmHWM of
// /proc/self/status, which starts afresh at exec. (getrusage's maxrss does not: on Linux it keeps
// the high-water mark of the forked copy of the parent, so a large parent would show through.)
let peak;
try {
  const kib = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
  peak = Number(kib[1]) * 1024;
} catch {
  peak = process.resourceUsage().maxRSS * 1024;
}
process.stdout.write(JSON.stringify({ base, peak, ms }));
