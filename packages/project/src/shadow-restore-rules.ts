// The restore's rules, the same for both engines (node/shadow-restore.ts, object-shadow/restore.ts):
// which of a turn's files a restore skips and lists, and which it writes. Each engine reads the
// versions from its own repository and writes through its own file system; what it decides with
// them is written here once. Portable (no node: import). docs/design.md §7, "Shadow mode".
import type { RestoreSkipReason } from '@entity-git/core';

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
export function restorable(facts: RestoreFacts): { eligible: string[]; skipped: Skipped[] } {
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
export async function planRestore(input: {
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
export function writeStep(current: string | null, planned: PlannedPath): 'done' | 'write' | 'skip' {
  if (current === (planned.to?.oid ?? null)) return 'done';
  return current === (planned.from?.oid ?? null) ? 'write' : 'skip';
}

/** The skipped paths of a restore's steps, in one list by path. */
export function allSkipped(...lists: readonly Skipped[][]): Skipped[] {
  return lists.flat().sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
