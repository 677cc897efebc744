// The PostgreSQL the suites run against, for every Node project: ENTITY_GIT_PG_URL when set (CI
// starts the cluster first), else the private cluster scripts/start-postgres.sh starts (or finds
// running). Set here, in vitest's own process, before any worker is forked, so each worker —
// Mastra's included, which reads only the variable — gets the URL.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default function postgres(): void {
  if (process.env.ENTITY_GIT_PG_URL) return;
  const script = fileURLToPath(new URL('../scripts/start-postgres.sh', import.meta.url));
  const run = spawnSync('bash', [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 600_000 });
  const line = run.stdout?.split('\n').find((l) => l.startsWith('ENTITY_GIT_PG_URL='));
  if (run.status !== 0 || !line) throw new Error(`scripts/start-postgres.sh failed (exit ${run.status ?? run.signal})`);
  process.env.ENTITY_GIT_PG_URL = line.slice('ENTITY_GIT_PG_URL='.length);
}
