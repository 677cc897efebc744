// What a consumer gets: packs every published package (each non-private folder of packages/,
// @entity-git/project among them; `pnpm pack`, as a release would), installs
// the tarballs into a fresh project outside the workspace (npm, from the registry for the rest),
// and checks them there (pako and @entity-git/git installed once each): a Node ESM script mirrors
// a small DAG (SQLite through kysely 0.29, the newest of the peer range; the workspace tests run
// 0.28) and `git fsck --strict` passes; the `entity-git` bin answers; TypeScript type-checks an
// import of every package with `nodenext` and with `bundler`; vite builds core + browser-fs with a
// mirror for the browser (gzip sizes printed, the first load held to BUNDLE_BUDGET_KB);
// `publint --strict` and `attw --profile esm-only` pass on each tarball. Run after `tsc -b` (the
// dist/ it packs); `.ci/run` runs it after the tests.
//
//   node scripts/consumer-check.mjs [--keep]     (--keep: leave the temp project for a look)
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const started = Date.now();
const BUNDLE_BUDGET_KB = 60;
// Pinned, as every other tool here: a new release of a checker must not turn CI red by itself.
const TOOLS = { pnpm: 'pnpm@12.4.2', publint: 'publint@0.3.25', attw: '@arethetypeswrong/cli@0.18.5' };
const CONSUMER_DEPS = {
  typescript: '5.9.3',
  vite: '8.3.8',
  '@types/node': '^20.19.43',
  '@types/better-sqlite3': '7.6.13',
  kysely: '~0.29.9',
};

const failures = [];
const step = (name) => console.log(`\n[consumer] ${name} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, {
    stdio: opts.capture ? 'pipe' : 'inherit',
    encoding: 'utf8',
    ...opts,
    env: { ...process.env, ...opts.env },
  });
  if (r.status !== 0) {
    const what = `${cmd} ${args.join(' ')} (in ${opts.cwd ?? root}) exited ${r.status ?? r.signal}`;
    if (opts.capture) console.error(r.stdout, r.stderr);
    if (opts.soft) failures.push(what);
    else throw new Error(what);
  }
  return r.stdout ?? '';
}

const published = readdirSync(join(root, 'packages'))
  .map((dir) => ({
    dir: join(root, 'packages', dir),
    manifest: JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')),
  }))
  .filter((p) => p.manifest.private !== true);

const work = mkdtempSync(join(tmpdir(), 'entity-git-consumer-'));
const tarballs = join(work, 'tarballs');
const app = join(work, 'app');
mkdirSync(tarballs);
mkdirSync(app);
try {
  step('build (tsc -b)');
  run('npx', ['tsc', '-b'], { cwd: root });

  step(`pack ${published.map((p) => p.manifest.name).join(', ')}`);
  const files = {};
  for (const p of published) {
    run('npx', ['-y', TOOLS.pnpm, 'pack', '--pack-destination', tarballs], { cwd: p.dir, capture: true });
    const tgz = readdirSync(tarballs).find((f) =>
      f.startsWith(`${p.manifest.name.replace('@', '').replace('/', '-')}-`),
    );
    if (!tgz) throw new Error(`no tarball for ${p.manifest.name}`);
    files[p.manifest.name] = join(tarballs, tgz);
    // What ships: dist, src (the sources the maps point at), README, LICENSE, CHANGELOG; never a
    // build cache, a test, or the workspace-only `source` condition.
    const listing = run('tar', ['-tzf', files[p.manifest.name]], { capture: true }).split('\n').filter(Boolean);
    const bad = listing.filter((f) => /\.tsbuildinfo$|\/test\/|\.test\.[jt]s$/.test(f));
    if (bad.length) failures.push(`${tgz} ships ${bad.join(', ')}`);
    for (const need of ['package/LICENSE', 'package/README.md', 'package/dist/index.js', 'package/dist/index.d.ts']) {
      if (!listing.includes(need)) failures.push(`${tgz} lacks ${need}`);
    }
    const shipped = JSON.parse(
      run('tar', ['-xzOf', files[p.manifest.name], 'package/package.json'], { capture: true }),
    );
    if (JSON.stringify(shipped.exports).includes('"source"'))
      failures.push(`${tgz}: its exports keep the source condition`);
    if (JSON.stringify(shipped).includes('workspace:')) failures.push(`${tgz}: a workspace: range was not replaced`);
    console.log(`  ${tgz}: ${listing.length} files`);
  }

  step('install the tarballs into a fresh project (npm)');
  const deps = { ...CONSUMER_DEPS };
  for (const [name, file] of Object.entries(files)) deps[name] = `file:${file}`;
  // better-sqlite3: the workspace's version (in the peer range), whose native module setup.mjs
  // built already. Compiling it again takes minutes on a busy 2-core machine (14 min measured).
  const sqliteDir = join(root, 'packages/sqlite/node_modules/better-sqlite3');
  deps['better-sqlite3'] = JSON.parse(readFileSync(join(sqliteDir, 'package.json'), 'utf8')).version;
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'entity-git-consumer', private: true, type: 'module', dependencies: deps }, null, 2),
  );
  run('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: app });
  const binary = 'build/Release/better_sqlite3.node';
  if (existsSync(join(sqliteDir, binary))) {
    mkdirSync(join(app, 'node_modules/better-sqlite3/build/Release'), { recursive: true });
    copyFileSync(join(sqliteDir, binary), join(app, 'node_modules/better-sqlite3', binary));
  } else {
    run('npm', ['rebuild', 'better-sqlite3'], {
      cwd: app,
      env: { npm_config_nodedir: process.env.npm_config_nodedir || '/usr' },
    });
  }
  const kysely = JSON.parse(readFileSync(join(app, 'node_modules/kysely/package.json'), 'utf8')).version;
  const pakoCopies = run('npm', ['ls', 'pako', '--all', '--parseable'], { cwd: app, capture: true })
    .split('\n')
    .filter(Boolean).length;
  console.log(`  kysely ${kysely}; pako installed ${pakoCopies} time(s)`);
  if (pakoCopies !== 1) failures.push(`pako is installed ${pakoCopies} times, not once`);
  // One copy of the git package, or `instanceof EntityGitError` fails between core and it.
  const gitCopies = run('npm', ['ls', '@entity-git/git', '--all', '--parseable'], { cwd: app, capture: true })
    .split('\n')
    .filter(Boolean).length;
  if (gitCopies !== 1) failures.push(`@entity-git/git is installed ${gitCopies} times, not once`);

  step('source maps point at shipped files');
  for (const name of Object.keys(files)) {
    const dir = join(app, 'node_modules', name);
    let maps = 0;
    for (const f of readdirSync(join(dir, 'dist'), { recursive: true })) {
      if (!String(f).endsWith('.map')) continue;
      maps++;
      const map = join(dir, 'dist', String(f));
      for (const source of JSON.parse(readFileSync(map, 'utf8')).sources) {
        if (!existsSync(join(dirname(map), source)))
          failures.push(`${name}: ${relative(dir, map)} points at ${source}, which does not ship`);
      }
    }
    console.log(`  ${name}: ${maps} maps`);
  }

  step('Node ESM: mirror a small DAG from SQLite, git fsck --strict');
  for (const f of ['mirror.mjs', 'without-sqlite.mjs', 'types.ts', 'browser.js', 'build.mjs'])
    copyFileSync(join(root, 'scripts/consumer', f), join(app, f));
  run('node', ['mirror.mjs', join(work, 'run')], { cwd: app, soft: true });
  run('npx', ['--no-install', 'entity-git', '--help'], { cwd: app, capture: true, soft: true });
  // better-sqlite3 is an optional peer: without it, only openSqlite fails, with a typed error.
  renameSync(join(app, 'node_modules/better-sqlite3'), join(work, 'better-sqlite3.aside'));
  try {
    run('node', ['without-sqlite.mjs', join(work, 'none.db')], { cwd: app, soft: true });
  } finally {
    renameSync(join(work, 'better-sqlite3.aside'), join(app, 'node_modules/better-sqlite3'));
  }

  step('TypeScript: nodenext and bundler');
  for (const resolution of ['nodenext', 'bundler']) {
    const module = resolution === 'nodenext' ? 'nodenext' : 'preserve';
    writeFileSync(
      join(app, `tsconfig.${resolution}.json`),
      JSON.stringify(
        {
          compilerOptions: {
            target: 'es2022',
            module,
            moduleResolution: resolution,
            strict: true,
            noEmit: true,
            types: ['node'],
            lib: ['es2023', 'dom'],
          },
          files: ['types.ts'],
        },
        null,
        2,
      ),
    );
    const before = failures.length;
    run('npx', ['--no-install', 'tsc', '-p', `tsconfig.${resolution}.json`], { cwd: app, soft: true });
    if (failures.length === before) console.log(`  ${resolution}: type-checked`);
  }

  step('vite: core + browser-fs with a mirror, for the browser');
  const report = JSON.parse(run('node', ['build.mjs'], { cwd: app, capture: true }).trim().split('\n').pop());
  for (const c of report.chunks)
    console.log(
      `  ${c.file}${c.initial ? ' (first load)' : ''}: ${(c.bytes / 1024).toFixed(1)} KB, ${(c.gzip / 1024).toFixed(1)} KB gzip`,
    );
  console.log(
    `  first load ${(report.initialGzip / 1024).toFixed(1)} KB gzip (budget ${BUNDLE_BUDGET_KB} KB), all chunks ${(report.totalGzip / 1024).toFixed(1)} KB gzip`,
  );
  if (report.initialGzip > BUNDLE_BUDGET_KB * 1024)
    failures.push(
      `the browser bundle's first load is ${(report.initialGzip / 1024).toFixed(1)} KB gzip, over ${BUNDLE_BUDGET_KB} KB`,
    );

  step('publint --strict and attw --profile esm-only on each tarball');
  for (const [name, file] of Object.entries(files)) {
    run('npx', ['-y', TOOLS.publint, '--strict', '--pack', 'false', join(app, 'node_modules', name)], {
      cwd: work,
      soft: true,
    });
    run('npx', ['-y', TOOLS.attw, '--profile', 'esm-only', '--format', 'table-flipped', file], {
      cwd: work,
      soft: true,
    });
  }
} catch (err) {
  failures.push(String(err.message ?? err));
} finally {
  if (!process.argv.includes('--keep')) rmSync(work, { recursive: true, force: true });
  else console.log(`[consumer] kept ${work}`);
}
console.log(
  `\n[consumer] ${failures.length === 0 ? 'ok' : 'FAILED'} in ${((Date.now() - started) / 1000).toFixed(0)} s`,
);
for (const f of failures) console.error(`  ✗ ${f}`);
process.exit(failures.length === 0 ? 0 : 1);
