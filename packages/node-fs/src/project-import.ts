// The design's migration step "existing git projects imported as Projects": find the git
// repositories under a directory and plan a Project for each that is not one yet. Read-only:
// directories are listed and `.git` entries looked at, nothing is written in any repository;
// the caller creates the planned projects (after showing the plan: a dry run comes first).
import { EntityGitError, type Project } from '@entity-git/core';
import { lstat, readdir, stat } from 'node:fs/promises';
import { basename, isAbsolute, join, resolve } from 'node:path';

/** Depth searched below the directory given (its children are depth 1). */
export const IMPORT_MAX_DEPTH = 3;
/** At most this many repositories are reported (a home directory can hold thousands). */
export const IMPORT_MAX_REPOS = 500;

/** Never searched: dependencies and caches, not projects of the user's. */
const SKIP = new Set(['node_modules', 'vendor', 'target', 'dist', 'build', '__pycache__']);

export interface ImportCandidate {
  workdir: string;
  /** The project name: the directory's name, made unique among the projects (`name-2`, …). */
  name: string;
  /** `new`: planned; `exists`: a project has this workdir already. */
  status: 'new' | 'exists';
  /** The existing project, for `exists`. */
  project_id: string | null;
}

async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

/** A working tree: a `.git` directory, or a `.git` file (a linked worktree, a submodule). */
async function isWorkingTree(dir: string): Promise<boolean> {
  return lstat(join(dir, '.git')).then(
    (s) => s.isDirectory() || s.isFile(),
    () => false,
  );
}

/**
 * The git working trees at or under `dir` (absolute, an existing directory; else
 * `INVALID_WORKDIR`), sorted by path. A repository's own subdirectories are not searched, nor
 * hidden directories, nor dependency folders; symbolic links are not followed.
 */
export async function findGitRepositories(
  dir: string,
  options: { maxDepth?: number; limit?: number } = {},
): Promise<string[]> {
  if (typeof dir !== 'string' || !isAbsolute(dir))
    throw new EntityGitError('INVALID_WORKDIR', `the directory must be an absolute path: ${JSON.stringify(dir)}`, {
      workdir: dir,
    });
  const root = resolve(dir);
  if (!(await isDirectory(root)))
    throw new EntityGitError('INVALID_WORKDIR', `${JSON.stringify(dir)} is not an existing directory`, {
      workdir: dir,
    });
  const maxDepth = options.maxDepth ?? IMPORT_MAX_DEPTH;
  const limit = options.limit ?? IMPORT_MAX_REPOS;
  const found: string[] = [];
  let level = [root];
  for (let depth = 0; depth <= maxDepth && level.length > 0 && found.length < limit; depth++) {
    const next: string[] = [];
    for (const d of level) {
      if (await isWorkingTree(d)) {
        found.push(d);
        continue;
      }
      if (depth === maxDepth) continue;
      const entries = await readdir(d, { withFileTypes: true }).catch(() => []);
      for (const e of entries)
        if (e.isDirectory() && !e.name.startsWith('.') && !SKIP.has(e.name)) next.push(join(d, e.name));
    }
    level = next.sort();
  }
  return found.sort().slice(0, limit);
}

/** What importing `repos` would do next to `projects`: one candidate per repository. */
export function planProjectImport(
  repos: readonly string[],
  projects: readonly Pick<Project, 'id' | 'name' | 'workdir'>[],
): ImportCandidate[] {
  const byWorkdir = new Map(projects.map((p) => [resolve(p.workdir), p]));
  const names = new Set(projects.map((p) => p.name));
  return repos.map((workdir) => {
    const existing = byWorkdir.get(resolve(workdir));
    if (existing) return { workdir, name: existing.name, status: 'exists' as const, project_id: existing.id };
    const base = basename(workdir) || workdir;
    let name = base;
    for (let n = 2; names.has(name); n++) name = `${base}-${n}`;
    names.add(name);
    return { workdir, name, status: 'new' as const, project_id: null };
  });
}
