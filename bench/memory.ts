// Peak RSS of syncing a session whose largest node is a 100 MB tool output (issue 8's memory
// row). Runs the sync in a child process so the figure is that process's alone; the DAG is served
// from a file, as a database would, so the source holds the node only while it is read.
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MB = 1 << 20;

async function child(dir: string, size: number): Promise<void> {
  const { createNodeMirror } = await import('../packages/node-fs/src/index.js');
  const session = { id: 's', title: null, agent_id: null, model: null, project_id: null, head: null, created_at: 1, metadata: null };
  const small = (id: string, seq: number, role: string, predecessor: string | null) =>
    ({ id, session_id: 's', seq, role, content: id, predecessor, caller: null, created_at: seq, metadata: null });
  const dag = {
    listSessions: async () => ['s'], getSession: async () => session, getHead: async () => null,
    async *nodesAfter(_id: string, after = 0) {
      if (after < 1) yield small('u', 1, 'user', null) as never;
      if (after < 2) yield small('a', 2, 'assistant', 'u') as never;
      if (after < 3) yield JSON.parse(readFileSync(join(dir, 'big.json'), 'utf8'));
      if (after < 4) yield small('b', 4, 'assistant', 't') as never;
    },
  };
  (globalThis as { gc?: () => void }).gc?.();
  const base = process.memoryUsage().rss;
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 2);
  const t0 = performance.now();
  await createNodeMirror({ dag, root: join(dir, 'root') }).sync('s');
  const ms = performance.now() - t0;
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage().rss);
  process.stdout.write(JSON.stringify({ size, base, peak, ms }));
}

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'entity-git-bench-memory-'));
  const size = 100 * MB;
  // Realistic text (it compresses like a log), written without holding it in this process.
  const fd = openSync(join(dir, 'big.json'), 'w');
  writeSync(fd, '{"id":"t","session_id":"s","seq":3,"role":"tool","content":"');
  const line = 'GET /api/items?page=17 200 12.3ms user=4711 bytes=5120\\n';
  const chunk = line.repeat(Math.ceil(MB / line.length)).slice(0, MB);
  for (let i = 0; i < size / MB; i++) writeSync(fd, chunk);
  writeSync(fd, '","predecessor":"a","caller":"a","created_at":3,"metadata":{"tool":"read"}}');
  closeSync(fd);
  const r = spawnSync(process.execPath, ['--expose-gc', '--conditions=source', '--import', 'tsx', new URL(import.meta.url).pathname, '--child', dir], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`memory bench child failed: ${r.stderr}`);
  const { base, peak, ms } = JSON.parse(r.stdout) as { base: number; peak: number; ms: number };
  const out = (n: number) => `${(n / MB).toFixed(0)} MB`;
  console.log('memory bench: sync of a session whose largest node is a 100 MB tool output (child process, DAG read from a file)');
  console.log(`  largest node ${out(size)} · RSS before ${out(base)} · peak ${out(peak)} · growth ${out(peak - base)} · sync ${ms.toFixed(0)} ms`);
  console.log(`  peak / node ${(peak / size).toFixed(2)}x · (peak − before) / node ${((peak - base) / size).toFixed(2)}x   (goal: peak ≤ 3x the node)`);
}

if (process.argv.includes('--child')) await child(process.argv[process.argv.indexOf('--child') + 1]!, 100 * MB);
