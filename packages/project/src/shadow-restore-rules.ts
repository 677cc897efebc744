// A restore that never loses work, its rules and its steps, the same for both engines
// (node/shadow-restore.ts, object-shadow/restore.ts): the files a turn changed go back to their
// state before it, except a file someone other than the agent changed since (skipped and listed);
// the state before the restore is snapshotted first (the restore point), so it can be undone the
// same way; the writes are planned in a journal first, so a restore a crash interrupted is
// finished by the next call. Each engine reads its repository and writes its file system; what it
// decides and in which order is written here once. Portable (no node: import).
// docs/design.md §7, "Shadow mode".
import { EntityGitError, type RestoreResult, type RestoreSkipReason, type TurnFiles } from '@entity-git/core';
import { parseSnapshotMessage } from './shadow-message.js';
import type { ShadowSnapshots } from './shadow-project-base.js';

/** A file in a snapshot: its mode and blob id. */
export interface Version {
  mode: string;
  oid: string;
}

export interface PlannedPath {
  path: string;
  /** Its version at the restore point; null: absent. */
  from: Version | null;
  /** The version the restore writes; null: removes it. */
  to: Version | null;
}

/** What a restore is about to write, kept beside the shadow repository until its closing snapshot. */
export interface RestoreJournal {
  /** The restore point's snapshot. */
  point: string;
  label: string;
  plan: PlannedPath[];
}

/** What a restore puts back: a turn's files (`<session> <turn>`), or a restore's, undone. */
export interface PutBack {
  /** The snapshot whose version of each path is written. */
  source: string;
  /** The snapshot after which the paths must have been changed only inside turns. */
  since: string;
  paths: readonly string[];
  /** What the restore snapshot names (`<session> <turn>`, or `undo <commit>`). */
  label: string;
}

/** A path the restore left alone, and why. */
export interface Skipped {
  path: string;
  reason: RestoreSkipReason;
}

/** The versions the rules look at, each engine's repository having read them. */
export interface RestoreFacts {
  /** The turn's paths the restore was asked for. */
  paths: readonly string[];
  /** Each path's version at the restore point (the work tree as the restore found it). */
  atPoint: ReadonlyMap<string, Version>;
  /** Each path's version in the newest snapshot before the restore point. */
  newest: ReadonlyMap<string, Version>;
  /** The paths a snapshot other than a turn's after-snapshot changed since the restored turn. */
  changedOutsideTurns: ReadonlySet<string>;
}

const same = (a: Version | undefined, b: Version | undefined) => a?.oid === b?.oid && a?.mode === b?.mode;

/**
 * The first rule: a file changed since the newest snapshot is someone else's work
 * (`changed-since-last-snapshot`), and so is one changed between turns since the restored turn
 * (`changed-outside-a-turn`); both are skipped and listed. A file no turn changed is never among
 * the paths at all. The rest may be restored.
 */
function restorable(facts: RestoreFacts): { eligible: string[]; skipped: Skipped[] } {
  const eligible: string[] = [];
  const skipped: Skipped[] = [];
  for (const path of facts.paths) {
    if (!same(facts.atPoint.get(path), facts.newest.get(path)))
      skipped.push({ path, reason: 'changed-since-last-snapshot' });
    else if (facts.changedOutsideTurns.has(path)) skipped.push({ path, reason: 'changed-outside-a-turn' });
    else eligible.push(path);
  }
  return { eligible, skipped };
}

/**
 * The second rule, on the eligible paths: a path whose parent directory is now a link leading out
 * of the workdir is skipped (`outside-workdir`); each other path is planned from its version at
 * the restore point to its version in `source`.
 */
async function planRestore(input: {
  eligible: readonly string[];
  atPoint: ReadonlyMap<string, Version>;
  source: ReadonlyMap<string, Version>;
  insideWorkdir: (path: string) => Promise<boolean>;
}): Promise<{ plan: PlannedPath[]; skipped: Skipped[] }> {
  const plan: PlannedPath[] = [];
  const skipped: Skipped[] = [];
  for (const path of input.eligible) {
    if (await input.insideWorkdir(path))
      plan.push({ path, from: input.atPoint.get(path) ?? null, to: input.source.get(path) ?? null });
    else skipped.push({ path, reason: 'outside-workdir' });
  }
  return { plan, skipped };
}

/**
 * The rule of each write, on the first run and when a crash's journal is finished alike: a path
 * already holding the restored version is done; one still holding its restore-point version is
 * written; one holding anything else was changed since by someone else and is skipped.
 */
function writeStep(current: string | null, planned: PlannedPath): 'done' | 'write' | 'skip' {
  if (current === (planned.to?.oid ?? null)) return 'done';
  return current === (planned.from?.oid ?? null) ? 'write' : 'skip';
}

/** The skipped paths of a restore's steps, in one list by path. */
function allSkipped(...lists: readonly Skipped[][]): Skipped[] {
  return lists.flat().sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** What a restore asks of an engine's shadow repository, beyond its snapshots. */
export interface RestoreRepository extends ShadowSnapshots {
  /** The versions of `paths` in a snapshot (a path it does not hold is absent). */
  blobs(commit: string, paths: readonly string[]): Promise<ReadonlyMap<string, Version>>;
}

/** One project's restores: each engine supplies what it reads and writes. */
export abstract class ShadowRestore<Repo extends RestoreRepository> {
  /** The project's shadow repository, which the engine's hooks read and write. */
  protected readonly repo: Repo;

  constructor(repo: Repo) {
    this.repo = repo;
  }

  /** Puts the files turn `turn` of `sessionId` changed (or only `paths` of them) back to their state before it. */
  async turn(input: { sessionId: string; turn: number; paths?: readonly string[] }): Promise<RestoreResult> {
    const turnFiles = await this.turnFiles(input.sessionId, input.turn);
    const only = input.paths ? new Set(input.paths) : null;
    const paths = turnFiles.files.map((f) => f.path).filter((p) => only === null || only.has(p));
    const label = `${input.sessionId} ${input.turn}`;
    return this.repo.exclusive(() => this.#putBack({ source: turnFiles.before, since: turnFiles.after, paths, label }));
  }

  /** Undoes a restore: the paths it put back return to the restore point, unless changed since. */
  async undo(restored: string): Promise<RestoreResult> {
    const trailers = parseSnapshotMessage(await this.messageOf(restored));
    const restorePoint = trailers?.before;
    if (trailers?.restoreOf === undefined || restorePoint === undefined)
      throw new EntityGitError('INVALID_ARGUMENT', `${restored} is not a restore's snapshot`, { restored });
    const paths = trailers.agentPaths ?? [];
    return this.repo.exclusive(() =>
      this.#putBack({ source: restorePoint, since: restored, paths, label: `undo ${restored}` }),
    );
  }

  /** Finishes a restore a crash interrupted, if its journal is there; run inside `exclusive`. */
  async finishInterrupted(): Promise<RestoreResult | null> {
    const journal = await this.readJournal();
    return journal === null ? null : this.#apply(journal);
  }

  async #putBack(job: PutBack): Promise<RestoreResult> {
    const repo = this.repo;
    const newest = await repo.tip();
    const point = await repo.snapshotHeld({ kind: 'restore', restoreOf: job.label });
    const [atPoint, last] = await Promise.all([
      repo.blobs(point.commit, job.paths),
      repo.blobs(newest ?? point.commit, job.paths),
    ]);
    const outside = await this.changedOutsideTurns(job.since, newest, job.paths);
    const first = restorable({ paths: job.paths, atPoint, newest: last, changedOutsideTurns: outside });
    const source = await repo.blobs(job.source, first.eligible);
    const { plan, skipped } = await planRestore({
      eligible: first.eligible,
      atPoint,
      source,
      insideWorkdir: (path) => this.insideWorkdir(path),
    });
    const journal = { point: point.commit, label: job.label, plan };
    await this.writeJournal(journal);
    const r = await this.#apply(journal);
    return { ...r, skipped: allSkipped(first.skipped, skipped, [...r.skipped]) };
  }

  /** Writes the plan's paths that still hold their restore-point version, then the closing snapshot. */
  async #apply(journal: RestoreJournal): Promise<RestoreResult> {
    const done: string[] = [];
    const skipped: Skipped[] = [];
    for (const planned of journal.plan) {
      const { path } = planned;
      await this.removeTemporary(path);
      const step = writeStep(await this.currentOid(path), planned);
      if (step === 'skip') {
        skipped.push({ path, reason: 'changed-since-last-snapshot' });
        continue;
      }
      if (step === 'write') await this.writeVersion(path, planned.to);
      done.push(path);
    }
    const after = await this.repo.snapshotHeld({
      kind: 'after',
      before: journal.point,
      restoreOf: journal.label,
      agentPaths: done,
    });
    await this.dropJournal();
    return { restorePoint: journal.point, restored: after.commit, paths: done.sort(), skipped };
  }

  /** The turn's changed files and its two snapshots (`SNAPSHOT_NOT_FOUND` without them). */
  protected abstract turnFiles(sessionId: string, turn: number): Promise<TurnFiles>;
  /** A snapshot commit's message. */
  protected abstract messageOf(commit: string): Promise<string>;
  /**
   * The paths changed, since `since`, by a snapshot that was not a turn's after-snapshot: edits
   * made between turns, which are not the agent's. When `since` is not behind the newest snapshot
   * (its history was pruned), every path that differs from it counts.
   */
  protected abstract changedOutsideTurns(
    since: string,
    newest: string | null,
    paths: readonly string[],
  ): Promise<ReadonlySet<string>>;
  /** Whether the path's parent directory, links resolved, is still inside the workdir. */
  protected abstract insideWorkdir(path: string): Promise<boolean>;
  /** Puts the journal in place whole (temp-then-rename), beside the shadow repository. */
  protected abstract writeJournal(journal: RestoreJournal): Promise<void>;
  /** The journal a restore left, or null. */
  protected abstract readJournal(): Promise<RestoreJournal | null>;
  protected abstract dropJournal(): Promise<void>;
  /** Removes the path's temporary file a killed write may have left. */
  protected abstract removeTemporary(path: string): Promise<void>;
  /** The blob id of what is at `path` in the workdir now (a link's target for a link); null: nothing. */
  protected abstract currentOid(path: string): Promise<string | null>;
  /** Writes a snapshot's version of a path (null: removes it), through a temporary file and a rename. */
  protected abstract writeVersion(path: string, entry: Version | null): Promise<void>;
}
