// Bounded growth of a shadow repository: keep the newest N turns' snapshots (default 100), cut the
// history below the oldest kept turn with git's own shallow boundary (no commit is rewritten, so
// every id and trailer stays valid), and repack, pruning what nothing reaches any more.
// docs/design.md §7, "Shadow mode".
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EntityGitError } from '@entity-git/core';
import type { ShadowRepository } from './shadow-repository.js';

import { DEFAULT_KEEP_TURNS } from '../shadow-names.js';
import type { PruneResult } from '../shadow-project-base.js';

export { DEFAULT_KEEP_TURNS };

export type { PruneResult };

/** Keeps the newest `keep` turns' snapshots (by when their after-snapshot was taken) and repacks. */
export function pruneSnapshots(repo: ShadowRepository, keep: number = DEFAULT_KEEP_TURNS): Promise<PruneResult> {
  if (!Number.isSafeInteger(keep) || keep < 1)
    throw new EntityGitError('INVALID_OPTION', `keep must be a whole number ≥ 1, got ${keep}`, { keep });
  return repo.exclusive(async () => {
    const listing = await repo.git.git(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/turns/']);
    const turnOf = new Map<string, string>();
    for (const line of listing.split('\n'))
      if (line.endsWith('/after')) turnOf.set(line.slice(0, 40), line.slice(41, -'/after'.length));
    // Newest first by the snapshots' own order (topological), not by a clock of one-second steps.
    const order = turnOf.size ? (await repo.git.git(['rev-list', '--topo-order', ...turnOf.keys()])).split('\n') : [];
    const afters = order.flatMap((c) => (turnOf.has(c) ? [turnOf.get(c) as string] : []));
    if (afters.length <= keep) return { kept: afters.length, dropped: 0 };
    const dropped = afters.slice(keep);
    const kept = afters.slice(0, keep);
    const deletes = dropped.flatMap((t) => [`delete ${t}/after\n`, `delete ${t}/before\n`]).join('');
    await repo.git.git(['update-ref', '--stdin'], deletes);
    // The oldest kept turn's before-snapshot becomes a shallow boundary: nothing below it is reached.
    const befores = (await repo.git.git(['rev-parse', ...kept.map((t) => `${t}/before`)])).trim().split('\n');
    await writeFile(join(repo.dir, 'git', 'shallow'), `${await oldest(repo, befores)}\n`, { mode: 0o600 });
    await repo.git.git(['gc', '--prune=now', '--quiet']);
    return { kept: kept.length, dropped: dropped.length };
  });
}

/** The last of `commits` in topological order (descendants first): one no other of them descends from. */
async function oldest(repo: ShadowRepository, commits: readonly string[]): Promise<string> {
  const wanted = new Set(commits);
  let last = commits[0] as string;
  for (const c of (await repo.git.git(['rev-list', '--topo-order', ...wanted])).split('\n'))
    if (wanted.has(c)) last = c;
  return last;
}

/**
 * git's own measure of "many loose objects" (gc.auto, 6,700): more than 27 of them in the one
 * fan-out directory `objects/17`, a 256th of them all. Read in-process, so a turn that packs
 * nothing spawns nothing.
 */
const LOOSE_SAMPLE_LIMIT = Math.ceil(6_700 / 256);

/**
 * Packs the loose objects into a pack of their own (`git repack -d`: nothing is dropped, the
 * existing packs are kept) once they are many, as `git gc --auto` would. A project's first
 * snapshot writes every file of the work tree as a loose object, one file system block each (for
 * 50,000 files, ~200 MB of blocks holding ~3 MB); the next prune would pack them only a hundred
 * turns later. docs/design.md §7, "Bounded growth".
 */
export async function packLooseObjects(repo: ShadowRepository): Promise<boolean> {
  const sample = await readdir(join(repo.dir, 'git', 'objects', '17')).catch(() => []);
  if (sample.filter((name) => /^[0-9a-f]{38}$/.test(name)).length <= LOOSE_SAMPLE_LIMIT) return false;
  await repo.exclusive(() => repo.git.git(['repack', '-d', '-q']));
  return true;
}
