// The project benches' work tree (shadow-snapshot, shadow-growth, project-status): `files` files
// in directories of 200 under src/, 2,000 more in an ignored dist/, committed once in a plain git
// repository at its root; the temporary root it lives in, with git configured alike for every
// bench; and a turn's edits.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const PER_DIR = 200;
export const IGNORED = 2_000;

export interface BenchProject {
  /** The temporary root (under TMPDIR): the project, its gitconfig, whatever else the bench puts there. */
  readonly root: string;
  /** The project's work tree, `<root>/project`. */
  readonly dir: string;
  /** git's environment: this root's gitconfig only (no signing, no automatic gc), a fixed identity. */
  readonly env: NodeJS.ProcessEnv;
  /** Runs git in the project; returns its output. */
  readonly git: (...args: string[]) => string;
}

/** A fresh temporary root named `entity-git-bench-<name>-…`, with an empty `project/` in it. */
export function benchProject(name: string): BenchProject {
  const root = realpathSync(mkdtempSync(join(tmpdir(), `entity-git-bench-${name}-`)));
  const dir = join(root, 'project');
  mkdirSync(dir);
  writeFileSync(
    join(root, 'gitconfig'),
    '[commit]\n\tgpgsign = false\n[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n',
  );
  const env = {
    ...process.env,
    GIT_CONFIG_GLOBAL: join(root, 'gitconfig'),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'User',
    GIT_AUTHOR_EMAIL: 'u@example.com',
    GIT_COMMITTER_NAME: 'User',
    GIT_COMMITTER_EMAIL: 'u@example.com',
  };
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 28 }).toString();
  return { root, dir, env, git };
}

export function makeTree(dir: string, files: number, git: (...args: string[]) => void): void {
  git('init', '-q', '-b', 'main');
  writeFileSync(join(dir, '.gitignore'), 'dist/\n');
  for (let d = 0; d < files / PER_DIR; d++) {
    const sub = join(dir, 'src', `m${String(d).padStart(3, '0')}`);
    mkdirSync(sub, { recursive: true });
    for (let f = 0; f < PER_DIR; f++)
      writeFileSync(join(sub, `f${String(f).padStart(3, '0')}.ts`), `export const v${d}_${f} = ${d * PER_DIR + f};\n`);
  }
  mkdirSync(join(dir, 'dist'), { recursive: true });
  for (let i = 0; i < IGNORED; i++) writeFileSync(join(dir, 'dist', `chunk-${i}.js`), `/* built ${i} */\n`);
  git('add', '-A');
  git('commit', '-q', '-m', 'a large project');
}

/** A turn's edits: `changed` files spread over the tree, new bytes each round; returns their paths. */
export function editTurn(dir: string, files: number, changed: number, round: number): string[] {
  const dirs = files / PER_DIR;
  const paths: string[] = [];
  for (let i = 0; i < changed; i++) {
    const d = (round * 37 + i * 23) % dirs;
    const f = (round * 11 + i * 7) % PER_DIR;
    const path = join('src', `m${String(d).padStart(3, '0')}`, `f${String(f).padStart(3, '0')}.ts`);
    writeFileSync(join(dir, path), `export const edited = ${round}_${i}; // turn ${round}\n`);
    paths.push(path);
  }
  return paths;
}
