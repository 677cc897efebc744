// Installs the workspace on a fresh machine: pnpm pinned and run through npx (corepack is not
// usable here), better-sqlite3 compiled against the system Node headers; and Debian's chromium
// for the browser tests when it is missing (playwright's own browser download is never used).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';

const root = new URL('..', import.meta.url).pathname;
const marker = `${root}node_modules/.modules.yaml`;
const lock = `${root}pnpm-lock.yaml`;
const fresh =
  existsSync(marker) &&
  existsSync(lock) &&
  statSync(marker).mtimeMs >= statSync(lock).mtimeMs &&
  statSync(marker).mtimeMs >= newestManifest();

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

// The browser tests (vitest's browser project and packages/browser-fs/test/pages.test.ts) run in
// Debian's chromium. Installing it takes a few minutes and needs root, as on CI.
// Only the test command asks for it (`--browser`): the demo needs no browser.
const chromium = '/usr/bin/chromium';
if (process.argv.includes('--browser') && !existsSync(chromium)) {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot) {
    console.error(
      `[setup] ${chromium} is missing and this is not root: run \`apt-get update && apt-get install -y chromium\` as root`,
    );
    process.exit(1);
  }
  console.log(
    `[setup] ${chromium} is missing: installing Debian's chromium (apt-get update && apt-get install -y chromium)`,
  );
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', 'chromium']]) {
    console.log(`[setup] apt-get ${args.join(' ')}`);
    const r = spawnSync('apt-get', args, { stdio: 'inherit', env });
    if (r.status !== 0) {
      console.error(`[setup] apt-get ${args.join(' ')} failed (exit ${r.status ?? r.signal})`);
      process.exit(r.status ?? 1);
    }
  }
  if (!existsSync(chromium)) {
    console.error(`[setup] apt-get installed chromium but ${chromium} is still missing`);
    process.exit(1);
  }
  console.log(`[setup] chromium installed at ${chromium}`);
}
