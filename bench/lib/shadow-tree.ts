// The shadow benches' work tree: `files` files in directories of 200 under src/, 2,000 more in an
// ignored dist/, committed once in a plain git repository at its root; and a turn's edits.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const PER_DIR = 200;
export const IGNORED = 2_000;

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
