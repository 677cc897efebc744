// Installs the workspace on a fresh machine: pnpm pinned and run through npx (corepack is not
// usable here), better-sqlite3 compiled against the system Node headers.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';

const root = new URL('..', import.meta.url).pathname;
const marker = `${root}node_modules/.modules.yaml`;
const lock = `${root}pnpm-lock.yaml`;
const fresh = existsSync(marker) && existsSync(lock) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs
  && statSync(marker).mtimeMs >= newestManifest();

function newestManifest() {
  let newest = statSync(`${root}package.json`).mtimeMs;
  for (const dir of ['packages', 'examples']) {
    const base = `${root}${dir}`;
    if (!existsSync(base)) continue;
    for (const name of readdirSync(base)) {
      const manifest = `${base}/${name}/package.json`;
      if (existsSync(manifest)) newest = Math.max(newest, statSync(manifest).mtimeMs);
    }
  }
  return newest;
}

if (!fresh) {
  const args = ['-y', 'pnpm@12.4.2', 'install'];
  if (process.env.CI) args.push('--frozen-lockfile');
  const env = { ...process.env, npm_config_nodedir: process.env.npm_config_nodedir || '/usr' };
  const r = spawnSync('npx', args, { cwd: root, stdio: 'inherit', env });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
