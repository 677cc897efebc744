// What a project's turn changed, and the restore of its files, as core sees them: the shadow
// snapshots of `@entity-git/project` implement it (docs/design.md §7, "Shadow mode"). Core never
// imports that package; the actions call whatever is given as `turnFiles`.

export interface TurnAt {
  /** The project's workdir, absolute. */
  workdir: string;
  sessionId: string;
  /** The turn N (≥ 1), as in the session repository. */
  turn: number;
}

export type TurnFileStatus = 'added' | 'modified' | 'deleted' | 'type-changed';

export interface TurnFile {
  readonly path: string;
  readonly status: TurnFileStatus;
  /** Lines added and removed; null for a binary file. */
  readonly added: number | null;
  readonly removed: number | null;
  /** `tools`: the agent's own tools reported writing it; `other`: its shell, another program, or the user. */
  readonly by: 'tools' | 'other';
}

export interface TurnSnapshots {
  readonly sessionId: string;
  readonly turn: number;
  /** The snapshot commit before the turn. */
  readonly before: string;
  /** The snapshot commit after it. */
  readonly after: string;
  /** The session repository's commit of the turn, when it was known. */
  readonly sessionCommit: string | null;
  /** Paths the agent's tools reported writing, workdir-relative. */
  readonly agentPaths: readonly string[];
}

export interface TurnFiles extends TurnSnapshots {
  /** Sorted by path. */
  readonly files: readonly TurnFile[];
}

export type RestoreSkipReason =
  /** Changed after the newest snapshot (by the user or another program, not in a turn). */
  | 'changed-since-last-snapshot'
  /** Changed between two turns since the restored turn: by the user or another program. */
  | 'changed-outside-a-turn'
  /** Its parent directory is now a link leading out of the workdir. */
  | 'outside-workdir';

export interface RestoreResult {
  /** The snapshot of the work tree just before the restore: what an undo puts back. */
  readonly restorePoint: string;
  /** The snapshot just after it (give it to `undoRestore`). */
  readonly restored: string;
  /** Paths put back, sorted. */
  readonly paths: readonly string[];
  /** Paths left as they are, with why. */
  readonly skipped: readonly { path: string; reason: RestoreSkipReason }[];
}

export interface TurnFilesSource {
  /** The paths a turn changed; `SNAPSHOT_NOT_FOUND` when the turn has no snapshots. */
  listTurnFiles(at: TurnAt): Promise<TurnFiles>;
  /** One file's unified diff across the turn (`''` when the turn did not change it). */
  turnFileDiff(at: TurnAt & { path: string }): Promise<string>;
  /** Puts the files the turn changed (or `paths` of them) back to their state before it. */
  restoreTurnFiles(at: TurnAt & { paths?: readonly string[] }): Promise<RestoreResult>;
  /** Undoes a restore, given its `restored` snapshot. */
  undoRestore(input: { workdir: string; restored: string }): Promise<RestoreResult>;
}
