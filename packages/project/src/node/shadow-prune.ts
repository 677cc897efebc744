// Bounded growth of a shadow repository: keep the newest N turns' snapshots (default 100), cut the
// history below the oldest kept turn with git's own shallow boundary (no commit is rewritten, so
// every id and trailer stays valid), and repack, pruning what nothing reaches any more.
// docs/design.md §7, "Shadow mode".
import { writeFile } from 'node:fs/promises';
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
