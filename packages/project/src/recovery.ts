import type { ProjectGitEngine, RepoState } from './project-git-engine.js';
import { sameEntry } from './project-git-engine.js';
import type { RecoveredCommit } from '@entity-git/core';
import { isInFlight, validFlight, type Journal } from './journal.js';

/** Finishing the index update of agent commits a crash interrupted (docs/project-git.md, "A crash in the middle of a commit"). */
export function inFlightRecovery(engine: ProjectGitEngine) {
  /**
   * Finish the index update of agent commits whose process died after the branch moved (the
   * journal still holds their in-flight record): for exactly their paths, an index entry that still
   * holds the parent commit's entry (or is absent where the parent had none) is set to the
   * commit's; one that holds anything else is the user's staging since and is left, with a warning.
   * A record whose commit is not HEAD (it never landed, or the user has moved on) is dropped. While
   * a merge, rebase… is in progress nothing is done: the records wait. Under the lock of `repo.root`.
   */
  const finishInFlight = async (repo: RepoState, j: Journal): Promise<RecoveredCommit[]> => {
    const all = j.all;
    const flights = all.filter(isInFlight);
    if (flights.length === 0 || repo.operations.length > 0) return [];
    const recovered: RecoveredCommit[] = [];
    for (const e of flights) {
      const f = e.inFlight!;
      if (!validFlight(f) || repo.head !== f.commit) continue;
      const paths = [...f.paths];
      const [before, after] = await Promise.all([
        engine.treeEntries(repo, f.parent, paths),
        engine.treeEntries(repo, f.commit, paths),
      ]);
      const updates = paths
        .map((path, i) => ({ path, expect: before[i]!, entry: after[i]! }))
        .filter((u) => !sameEntry(u.expect, u.entry));
      const found = updates.length === 0 ? [] : await engine.updateIndex(repo, updates);
      const set: string[] = [];
      const left: string[] = [];
      updates.forEach((u, i) => {
        const was = found[i] ?? null;
        if (was !== null && sameEntry(was, u.expect)) set.push(u.path);
        else if (was === null || !sameEntry(was, u.entry)) left.push(u.path);
      });
      const warning =
        left.length === 0
          ? null
          : `an interrupted auto-commit (${f.commit.slice(0, 12)}) could not finish updating the index: you have staged changes of your own on ${left.join(', ')} since, left as they are — check \`git status\` before committing`;
      recovered.push(
        Object.freeze({ commit: f.commit, paths: Object.freeze(set), userPaths: Object.freeze(left), warning }),
      );
    }
    await j.write(all.filter((x) => !isInFlight(x)));
    return recovered;
  };

  return finishInFlight;
}
