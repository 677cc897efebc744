import { buildCommit, type ObjectStore, parseCommit, type StorageStat, type WorkIndexEntry } from '@entity-git/git';
import { type FileState, type RepoState, sameEntry, type UndoRequest } from '../project-git-engine.js';
import { applyToTree, storeTrees } from './commit.js';
import type { RepoFiles } from './repo-files.js';
import type { Flat } from './status.js';

/** What an undo checks and writes: the user's repository, its index entries now, and `core.filemode`. */
export interface UndoPlace {
  readonly files: RepoFiles;
  readonly repo: RepoState;
  readonly fileMode: boolean;
}

/** The paths of `expect` whose index entry (stage 0, and no conflict stage) or working-tree file differs from it. */
export async function movedPaths(
  { files, repo, fileMode }: UndoPlace,
  entries: readonly WorkIndexEntry[],
  expect: readonly FileState[],
): Promise<string[]> {
  const out: string[] = [];
  for (const e of expect) {
    const at = entries.filter((x) => x.path === e.path);
    const staged = at.find((x) => x.stage === 0);
    const inIndex: FileState | null = at.some((x) => x.stage !== 0)
      ? null
      : staged === undefined
        ? { path: e.path, oid: null, mode: null }
        : { path: e.path, oid: staged.oid, mode: staged.mode.toString(8) };
    const inTree = (await files.capture(repo.root, e.path, fileMode, staged?.mode)).state;
    if (inIndex === null || !sameEntry(inIndex, e) || !sameEntry(inTree, e)) out.push(e.path);
  }
  return out;
}

/** The commit that takes the agent's back: HEAD's tree with `entries` applied, on top of HEAD. */
export async function revertCommit(
  objects: ObjectStore,
  head: string,
  entries: readonly FileState[],
  to: Extract<UndoRequest['to'], { kind: 'commit' }>,
): Promise<string> {
  const changes = new Map<string, Flat | null>(
    entries.map((e) => [e.path, e.oid === null ? null : { mode: e.mode!, oid: e.oid }]),
  );
  const headTree = parseCommit(await objects.readTyped(head, 'commit')).tree;
  const tree =
    (await applyToTree(storeTrees(objects), headTree, changes)) ?? (await objects.write('tree', new Uint8Array(0)));
  return objects.write(
    'commit',
    buildCommit({ tree, parents: [head], author: to.author, committer: to.committer, message: to.message }),
  );
}

/** `entries` written into the working tree; what the index gets for each (stat data only where the file holds the entry). */
export async function writeEntries(
  { files, repo, fileMode }: UndoPlace,
  objects: ObjectStore,
  entries: readonly FileState[],
): Promise<Array<{ state: FileState; st: StorageStat | null }>> {
  // Removals first, so a file that gives way to a directory (or the reverse) never meets itself.
  for (const e of entries) if (e.oid === null) await files.removeWorkFile(repo.root, e.path);
  const set: Array<{ state: FileState; st: StorageStat | null }> = [];
  for (const e of entries) {
    if (e.oid === null) {
      set.push({ state: e, st: null });
      continue;
    }
    await files.writeWorkFile(objects, repo.root, e);
    const c = await files.capture(repo.root, e.path, fileMode, parseInt(e.mode!, 8));
    set.push({ state: e, st: sameEntry(c.state, e) ? c.st : null });
  }
  return set;
}
