// A restore that never loses work: the files a turn changed go back to their state before it,
// except a file someone other than the agent changed since (skipped and listed). The state before
// the restore is snapshotted first, so the restore can be undone the same way. It writes only the
// paths it restores, each through a temporary file renamed into place, and never touches a branch
// of the user's. docs/design.md §7, "Shadow mode".
import { chmod, lstat, mkdir, realpath, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join, sep } from 'node:path';
import type { RestoreResult } from '@entity-git/core';
import { EntityGitError } from '@entity-git/core';
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
import { currentOid, dropJournal, readJournal, writeJournal } from './shadow-restore-journal.js';
import type { ShadowRepository } from './shadow-repository.js';
import { listTurnFiles } from './shadow-turn-files.js';

/** Puts the files turn `turn` of `sessionId` changed (or only `only` of them) back to their state before it. */
export async function restoreTurnFiles(
  repo: ShadowRepository,
  input: { sessionId: string; turn: number; paths?: readonly string[] },
): Promise<RestoreResult> {
  const turnFiles = await listTurnFiles(repo, input.sessionId, input.turn);
  const only = input.paths ? new Set(input.paths) : null;
  const paths = turnFiles.files.map((f) => f.path).filter((p) => only === null || only.has(p));
  return repo.exclusive(() =>
    putBack(repo, {
      source: turnFiles.before,
      since: turnFiles.after,
      paths,
      label: `${input.sessionId} ${input.turn}`,
    }),
  );
}

/** Undoes a restore: the paths it put back return to the restore point, unless changed since. */
export async function undoRestore(repo: ShadowRepository, restored: string): Promise<RestoreResult> {
  const message = await repo.git.git(['cat-file', 'commit', restored]);
  const trailers = parseSnapshotMessage(message.slice(message.indexOf('\n\n') + 2));
  const restorePoint = trailers?.before;
  if (trailers?.restoreOf === undefined || restorePoint === undefined)
    throw new EntityGitError('INVALID_ARGUMENT', `${restored} is not a restore's snapshot`, {
      restored,
    });
  const paths = trailers.agentPaths ?? [];
  return repo.exclusive(() =>
    putBack(repo, { source: restorePoint, since: restored, paths, label: `undo ${restored}` }),
  );
}

async function putBack(repo: ShadowRepository, job: PutBack): Promise<RestoreResult> {
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
    insideWorkdir: (path) => insideWorkdir(repo.workdir, path),
  });
  await writeJournal(repo, { point: point.commit, label: job.label, plan });
  const r = await applyJournal(repo, { point: point.commit, label: job.label, plan });
  return { ...r, skipped: allSkipped(first.skipped, skipped, [...r.skipped]) };
}

/** Finishes a restore a crash interrupted, if its journal is there; run inside `exclusive`. */
export async function finishInterruptedRestore(repo: ShadowRepository): Promise<RestoreResult | null> {
  const journal = await readJournal(repo);
  return journal === null ? null : applyJournal(repo, journal);
}

/** Writes the plan's paths that still hold their restore-point version, then the closing snapshot. */
async function applyJournal(repo: ShadowRepository, journal: RestoreJournal): Promise<RestoreResult> {
  const done: string[] = [];
  const skipped: Skipped[] = [];
  for (const planned of journal.plan) {
    const { path } = planned;
    await rm(tempOf(join(repo.workdir, path)), { force: true });
    const step = writeStep(await currentOid(repo.workdir, path), planned);
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
  await dropJournal(repo);
  return { restorePoint: journal.point, restored: after.commit, paths: done.sort(), skipped };
}

/**
 * The paths changed, since `since`, by a snapshot that was not a turn's after-snapshot: edits
 * made between turns, which are not the agent's. When `since` is not behind the newest snapshot
 * (its history was pruned), every path that differs from it counts.
 */
async function changedOutsideTurns(
  repo: ShadowRepository,
  since: string,
  newest: string | null,
  paths: readonly string[],
): Promise<Set<string>> {
  const out = new Set<string>();
  if (newest === null || newest === since || paths.length === 0) return out;
  const ancestor = await repo.git.run(['merge-base', '--is-ancestor', since, newest]);
  if (ancestor.code !== 0) {
    const [then, last] = await Promise.all([repo.blobs(since, paths), repo.blobs(newest, paths)]);
    for (const p of paths) if (then.get(p)?.oid !== last.get(p)?.oid) out.add(p);
    return out;
  }
  const log = await repo.git.git([
    'log',
    '--first-parent',
    '--no-renames',
    '-z',
    '--name-only',
    '--format=%x01%H%x01%B',
    `${since}..${newest}`,
    '--',
    ...paths,
  ]);
  const parts = log.split('\x01');
  for (let i = 1; i + 1 < parts.length; i += 2) {
    const rest = parts[i + 1] as string;
    const end = rest.indexOf('\0\n');
    const kind = parseSnapshotMessage(rest.slice(0, end))?.kind;
    if (kind === 'after') continue;
    for (const name of rest.slice(end + 2).split('\0')) if (name) out.add(name);
  }
  return out;
}

/** Whether the path's parent directory, links resolved, is still inside the workdir. */
async function insideWorkdir(workdir: string, path: string): Promise<boolean> {
  let dir = dirname(join(workdir, path));
  // The nearest existing ancestor decides: missing directories are created below it.
  for (;;) {
    const real = await realpath(dir).catch(() => null);
    if (real !== null) return real === workdir || real.startsWith(workdir + sep);
    const up = dirname(dir);
    if (up === dir) return false;
    dir = up;
  }
}

const tempOf = (target: string) => join(dirname(target), `.${basename(target)}.entity-git-restore`);

/** Writes a snapshot's version of a path (null: removes it), through a temporary file and a rename. */
async function writeVersion(repo: ShadowRepository, path: string, entry: Version | null): Promise<void> {
  const target = join(repo.workdir, path);
  if (entry === null) {
    const info = await lstat(target).catch(() => null);
    if (info !== null && !info.isDirectory()) await rm(target);
    return;
  }
  const bytes = await repo.blob(entry.oid);
  await mkdir(dirname(target), { recursive: true });
  // A fixed name beside the file, so a restore finished after a crash removes what one left.
  const temp = tempOf(target);
  await rm(temp, { force: true });
  try {
    if (entry.mode === '120000') await symlink(bytes.toString('utf8'), temp);
    else {
      await writeFile(temp, bytes, { mode: entry.mode === '100755' ? 0o755 : 0o644 });
      await chmod(temp, entry.mode === '100755' ? 0o755 : 0o644);
    }
    const existing = await lstat(target).catch(() => null);
    if (existing?.isDirectory()) await rm(target, { recursive: false }).catch(() => undefined);
    await rename(temp, target);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}
