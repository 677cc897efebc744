// A restore that never loses work, on the object engine, with the native engine's rules
// (node/shadow-restore.ts): the files a turn changed go back to their state before it, except a
// file changed since by someone other than the agent (skipped and listed); the state before the
// restore is snapshotted first, so the restore can be undone the same way; each path is written
// through a temporary file renamed into place, planned first in a journal beside the repository,
// so a restore a crash interrupted is finished by the next call. docs/design.md §7, "Shadow mode".
import type { RestoreResult } from '@entity-git/core';
import { dirname, EntityGitError, fromUtf8, joinPath, type Store } from '@entity-git/git';
import { parseSnapshotMessage } from '../shadow-message.js';
import {
  allSkipped,
  planRestore,
  type PutBack,
  type RestoreJournal,
  restorable,
  type Skipped,
  type Version,
  writeStep,
} from '../shadow-restore-rules.js';
import type { ObjectShadowRepository } from './object-shadow-repository.js';
import { listTurnFiles, snapshotChanges } from './turn-files.js';

const journalPath = (repo: ObjectShadowRepository) => joinPath(repo.dir, 'restore-journal.json');
const tempOf = (target: string) =>
  joinPath(dirname(target), `.${target.slice(target.lastIndexOf('/') + 1)}.entity-git-restore`);

/** Puts the files turn `turn` of `sessionId` changed (or only `paths` of them) back to their state before it. */
export async function restoreTurnFiles(
  repo: ObjectShadowRepository,
  input: { sessionId: string; turn: number; paths?: readonly string[] },
): Promise<RestoreResult> {
  const turnFiles = await listTurnFiles(repo, input.sessionId, input.turn);
  const only = input.paths ? new Set(input.paths) : null;
  const paths = turnFiles.files.map((f) => f.path).filter((p) => only === null || only.has(p));
  const label = `${input.sessionId} ${input.turn}`;
  return repo.exclusive(() => putBack(repo, { source: turnFiles.before, since: turnFiles.after, paths, label }));
}

/** Undoes a restore: the paths it put back return to the restore point, unless changed since. */
export async function undoRestore(repo: ObjectShadowRepository, restored: string): Promise<RestoreResult> {
  const trailers = parseSnapshotMessage((await repo.commit(restored)).message);
  const restorePoint = trailers?.before;
  if (trailers?.restoreOf === undefined || restorePoint === undefined)
    throw new EntityGitError('INVALID_ARGUMENT', `${restored} is not a restore's snapshot`, { restored });
  const paths = trailers.agentPaths ?? [];
  return repo.exclusive(() =>
    putBack(repo, { source: restorePoint, since: restored, paths, label: `undo ${restored}` }),
  );
}

async function putBack(repo: ObjectShadowRepository, job: PutBack): Promise<RestoreResult> {
  const newest = await repo.tip();
  const point = await repo.snapshotHeld({ kind: 'restore', restoreOf: job.label });
  const [atPoint, last] = await Promise.all([
    repo.blobs(point.commit, job.paths),
    repo.blobs(newest ?? point.commit, job.paths),
  ]);
  const outside = await changedOutsideTurns(repo, job.since, newest, job.paths);
  const first = restorable({ paths: job.paths, atPoint, newest: last, changedOutsideTurns: outside });
  const source = await repo.blobs(job.source, first.eligible);
  const { plan, skipped } = await planRestore({
    eligible: first.eligible,
    atPoint,
    source,
    insideWorkdir: (path) => insideWorkdir(repo, path),
  });
  const journal = { point: point.commit, label: job.label, plan };
  await repo.store.writeAtomic(journalPath(repo), JSON.stringify(journal));
  const r = await applyJournal(repo, journal);
  return { ...r, skipped: allSkipped(first.skipped, skipped, [...r.skipped]) };
}

/** Finishes a restore a crash interrupted, if its journal is there; run inside `exclusive`. */
export async function finishInterruptedRestore(repo: ObjectShadowRepository): Promise<RestoreResult | null> {
  const text = await repo.store.readText(journalPath(repo));
  if (text === null) return null;
  let journal: RestoreJournal;
  try {
    journal = JSON.parse(text) as RestoreJournal;
  } catch {
    // A journal is renamed into place whole; one that does not parse was never a restore's.
    await repo.store.remove(journalPath(repo));
    return null;
  }
  return applyJournal(repo, journal);
}

export async function hasInterruptedRestore(repo: ObjectShadowRepository): Promise<boolean> {
  return (await repo.store.lstat(journalPath(repo))) !== null;
}

/** Writes the plan's paths that still hold their restore-point version, then the closing snapshot. */
async function applyJournal(repo: ObjectShadowRepository, journal: RestoreJournal): Promise<RestoreResult> {
  const done: string[] = [];
  const skipped: Skipped[] = [];
  for (const planned of journal.plan) {
    const { path } = planned;
    await repo.store.remove(tempOf(joinPath(repo.workdir, path)));
    const step = writeStep(await currentOid(repo, path), planned);
    if (step === 'skip') {
      skipped.push({ path, reason: 'changed-since-last-snapshot' });
      continue;
    }
    if (step === 'write') await writeVersion(repo, path, planned.to);
    done.push(path);
  }
  const after = await repo.snapshotHeld({
    kind: 'after',
    before: journal.point,
    restoreOf: journal.label,
    agentPaths: done,
  });
  await repo.store.remove(journalPath(repo));
  return { restorePoint: journal.point, restored: after.commit, paths: done.sort(), skipped };
}

/** The blob id of what is at `path` in the workdir now (a link's target for a link); null: nothing. */
async function currentOid(repo: ObjectShadowRepository, path: string): Promise<string | null> {
  const { store } = repo;
  const full = joinPath(repo.workdir, path);
  const st = await store.lstat(full);
  if (st === null || st.isDirectory()) return null;
  const bytes =
    st.isSymbolicLink() && store.fs.readlink
      ? new TextEncoder().encode(await store.fs.readlink(full))
      : await store.read(full);
  return bytes === null ? null : repo.objects.hash('blob', bytes);
}

/**
 * The paths changed, since `since`, by a snapshot that was not a turn's after-snapshot: edits
 * made between turns, which are not the agent's. When `since` is not on the newest snapshot's
 * first-parent line (its history was pruned, or another session's turn forked it), every path
 * that differs from it counts.
 */
async function changedOutsideTurns(
  repo: ObjectShadowRepository,
  since: string,
  newest: string | null,
  paths: readonly string[],
): Promise<Set<string>> {
  const out = new Set<string>();
  if (newest === null || newest === since || paths.length === 0) return out;
  const wanted = new Set(paths);
  const line: string[] = [];
  let c: string | undefined = newest;
  while (c !== undefined && c !== since) {
    line.push(c);
    // A commit below a pruned history's boundary is gone: the line ends there.
    c = (await repo.commit(c).catch(() => null))?.parents[0];
  }
  if (c !== since) {
    const [then, last] = await Promise.all([repo.blobs(since, paths), repo.blobs(newest, paths)]);
    for (const p of paths) if (then.get(p)?.oid !== last.get(p)?.oid) out.add(p);
    return out;
  }
  for (const id of line) {
    const commit = await repo.commit(id);
    if (parseSnapshotMessage(commit.message)?.kind === 'after' || commit.parents[0] === undefined) continue;
    for (const change of await snapshotChanges(repo, commit.parents[0], id))
      if (wanted.has(change.path)) out.add(change.path);
  }
  return out;
}

/** Whether the parent directory of `path`, links resolved, is still inside the workdir (no link leads out). */
async function insideWorkdir(repo: ObjectShadowRepository, path: string): Promise<boolean> {
  const { store, workdir } = repo;
  let at = workdir;
  const parts = path.split('/').slice(0, -1);
  for (const part of parts) {
    at = joinPath(at, part);
    const st = await store.lstat(at);
    if (st === null) return true;
    if (st.isSymbolicLink()) return false;
  }
  return true;
}

/** Writes a snapshot's version of a path (null: removes it), through a temporary file and a rename. */
async function writeVersion(repo: ObjectShadowRepository, path: string, entry: Version | null): Promise<void> {
  const store: Store = repo.store;
  const target = joinPath(repo.workdir, path);
  if (entry === null) {
    const st = await store.lstat(target);
    if (st !== null && !st.isDirectory()) await store.remove(target);
    return;
  }
  const bytes = await repo.blob(entry.oid);
  await store.mkdirp(dirname(target));
  // A fixed name beside the file, so a restore finished after a crash removes what one left.
  const temp = tempOf(target);
  await store.remove(temp);
  try {
    if (entry.mode === '120000') await store.fs.symlink!(fromUtf8(bytes), temp);
    else await store.fs.writeFile(temp, bytes, { mode: entry.mode === '100755' ? 0o755 : 0o644 });
    if ((await store.lstat(target))?.isDirectory()) await store.removeEmptyDir(target);
    await store.fs.rename(temp, target);
  } catch (err) {
    await store.remove(temp);
    throw err;
  }
}
