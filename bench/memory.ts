// Peak RSS of syncing a session whose largest node is a 100 MB tool output. The sync runs in a
// child process (bench/memory-child.mjs, on the compiled library) so the figure is that process's
// alone, read from the kernel's high-water mark (VmHWM); the DAG is served from a file, as a database
// would, so the source holds the node only while it is read.
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeResults } from './lib/measure.js';

const MB = 1 << 20;

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
  const r = spawnSync(process.execPath, ['--expose-gc', new URL('./memory-child.mjs', import.meta.url).pathname, dir], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`memory bench child failed: ${r.stderr}`);
  const { base, peak, ms } = JSON.parse(r.stdout) as { base: number; peak: number; ms: number };
  const out = (n: number) => `${(n / MB).toFixed(0)} MB`;
  console.log(
    'memory bench: sync of a session whose largest node is a 100 MB tool output (child process on the compiled library, DAG read from a file)',
  );
  console.log(
    `  largest node ${out(size)} · RSS before ${out(base)} · peak ${out(peak)} · growth ${out(peak - base)} · sync ${ms.toFixed(0)} ms`,
  );
  console.log(
    `  peak / node ${(peak / size).toFixed(2)}x · (peak − before) / node ${((peak - base) / size).toFixed(2)}x   (goal: peak ≤ 3x the node)`,
  );
  rmSync(dir, { recursive: true, force: true });
  writeResults('memory', {
    node: process.version,
    unit: 'bytes',
    largestNode: size,
    rssBefore: base,
    rssPeak: peak,
    syncMs: ms,
    peakOverNode: peak / size,
    growthOverNode: (peak - base) / size,
  });
}
