import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A private temp directory, removed by the returned `remove`. */
export function tempDir(prefix = 'entity-git-sqlite-'): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Three existing workdirs, a missing path and a file path inside `dir`, for the project suite. */
export function workdirsIn(dir: string): { workdirs: string[]; missingWorkdir: string; fileWorkdir: string } {
  const workdirs = ['alpha', 'beta', 'gamma'].map((name) => join(dir, 'work', name));
  for (const w of workdirs) mkdirSync(w, { recursive: true });
  const fileWorkdir = join(dir, 'work', 'a-file');
  writeFileSync(fileWorkdir, 'not a directory');
  return { workdirs, missingWorkdir: join(dir, 'work', 'missing'), fileWorkdir };
}
