import type { RepoOperation } from './project-git-engine.js';

/**
 * The operations in progress in a git directory, from the marker files git itself reads for
 * `git status` ("You are in the middle of …"). `exists` and `read` take a name relative to the
 * (per-worktree) git directory; `read` resolves null when the file is absent.
 */
export async function operationsInProgress(
  exists: (name: string) => Promise<boolean>,
  read: (name: string) => Promise<string | null>,
): Promise<RepoOperation[]> {
  const ops: RepoOperation[] = [];
  if (await exists('MERGE_HEAD')) ops.push('merge');
  if (await exists('rebase-merge')) ops.push('rebase');
  if (await exists('rebase-apply')) ops.push((await exists('rebase-apply/applying')) ? 'am' : 'rebase');
  if (await exists('CHERRY_PICK_HEAD')) ops.push('cherry-pick');
  if (await exists('REVERT_HEAD')) ops.push('revert');
  // A multi-commit pick or revert that stopped keeps its plan here even after the conflicted commit is made.
  const todo = await read('sequencer/todo');
  if (todo !== null) {
    const first =
      todo
        .split('\n')
        .map((l) => l.trim())
        .find((l) => l !== '' && !l.startsWith('#')) ?? '';
    const op: RepoOperation = /^revert\b/.test(first) ? 'revert' : 'cherry-pick';
    if (!ops.includes(op)) ops.push(op);
  }
  if ((await exists('BISECT_LOG')) || (await exists('BISECT_START'))) ops.push('bisect');
  return ops;
}
