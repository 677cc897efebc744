// The integration project's children (crash, concurrency and environment tests) run plain `node`
// on the built packages (dist/), not tsx on the sources: 0.15 s a start instead of 0.6 s. So the
// build comes first, once per run; `tsc -b` does nothing when dist/ is current (`npm test` has
// just run it).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export default function build(): void {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '-b'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0)
    throw new Error(`tsc -b failed (exit ${r.status ?? r.signal}): the children would run stale code`);
}
