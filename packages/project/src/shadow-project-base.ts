// What both engines' shadow-mode project gits share (native git's `node/shadow-project-git.ts`,
// the object engine's `object-shadow/object-shadow-project-git.ts`), written once: a project's
// mode and size cap, the turn's two snapshots and their refs, when to prune, the arguments'
// checks, and the hand-over to the auto-commit in `auto-commit` mode. Each engine supplies its
// repository and the work done on it. Portable (no node: import): the object engine runs in the
// browser too. docs/design.md §7, "Shadow mode".
import type {
  AfterTurnInput,
  AfterTurnResult,
  AgentCommitsInput,
  AgentCommitsResult,
  ProjectGit,
  ProjectSnapshot,
  RestoreResult,
  RevertInput,
  RevertResult,
  TurnAt,
  TurnFiles,
  TurnFilesSource,
} from '@entity-git/core';
import { EntityGitError } from '@entity-git/git';
import type { SnapshotTrailers } from './shadow-message.js';
import {
  DEFAULT_KEEP_TURNS,
  DEFAULT_MAX_FILE_BYTES,
  PROJECT_MODES,
  type ProjectMode,
  type ProjectShadowSettings,
  shadowModeSnapshot,
} from './shadow-names.js';

/** What the shared logic asks of an engine's shadow repository. */
export interface ShadowSnapshots {
  readonly workdir: string;
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /** The newest snapshot, or null before the first. */
  tip(): Promise<string | null>;
  snapshot(trailers: SnapshotTrailers): Promise<{ readonly commit: string }>;
  /** {@link snapshot} for a caller already inside {@link exclusive}. */
  snapshotHeld(trailers: SnapshotTrailers): Promise<{ readonly commit: string }>;
}

export interface PruneResult {
  /** Turns whose snapshots are kept. */
  readonly kept: number;
  /** Turns whose snapshots were dropped. */
  readonly dropped: number;
}

/** The options both engines take alike. */
export interface ShadowModeOptions {
  /** The auto-commit used for projects in `auto-commit` mode. */
  autoCommit: ProjectGit;
  /** The mode of a project never configured. Default `shadow`. */
  defaultMode?: ProjectMode | undefined;
  /** The size cap of a project never configured. Default 5 MiB. */
  maxFileBytes?: number | undefined;
  /** Keep the newest this many turns' snapshots per project. Default 100. */
  keepTurns?: number | undefined;
}

/** A turn's refs to set: the turn's before- and after-snapshot. */
export interface TurnSnapshots {
  readonly sessionId: string;
  readonly turn: number;
  readonly before: string;
  readonly after: string;
}

/** A session id goes into trailers and a turn into ref names: no line breaks, a whole turn number. */
function checkTurn(at: { sessionId: string; turn: number }): void {
  if (typeof at.sessionId !== 'string' || !/^[^\x00-\x1f\x7f]{1,512}$/.test(at.sessionId))
    throw new EntityGitError('INVALID_ID', `not a session id: ${JSON.stringify(at.sessionId)}`, {});
  if (!Number.isSafeInteger(at.turn) || at.turn < 1)
    throw new EntityGitError('INVALID_ARGUMENT', `turn must be a whole number ≥ 1, got ${at.turn}`, {});
}

const SNAPSHOT_ID = /^[0-9a-f]{40}$/;

export abstract class ShadowModeProjectGit<Repo extends ShadowSnapshots> implements ProjectGit, TurnFilesSource {
  readonly #autoCommit: ProjectGit;
  readonly #defaults: ProjectShadowSettings;
  readonly #keepTurns: number;

  protected constructor(options: ShadowModeOptions) {
    this.#autoCommit = options.autoCommit;
    this.#defaults = {
      mode: options.defaultMode ?? 'shadow',
      maxFileBytes: options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
    };
    this.#keepTurns = options.keepTurns ?? DEFAULT_KEEP_TURNS;
  }

  get engine(): string {
    return this.#autoCommit.engine;
  }

  /** The project's mode and size cap: as configured, else the defaults. */
  async settings(workdir: string): Promise<ProjectShadowSettings> {
    const text = await this.readSettings(workdir);
    return text === null ? { ...this.#defaults } : { ...this.#defaults, ...(JSON.parse(text) as object) };
  }

  /** Chooses the project's mode and size cap, when it is created or later. */
  async configure(workdir: string, settings: Partial<ProjectShadowSettings>): Promise<ProjectShadowSettings> {
    if (settings.mode !== undefined && !PROJECT_MODES.includes(settings.mode))
      throw new EntityGitError(
        'INVALID_OPTION',
        `mode must be shadow or auto-commit, got ${JSON.stringify(settings.mode)}`,
        {},
      );
    const next = { ...(await this.settings(workdir)), ...settings };
    const repo = await this.#repository(workdir, next.maxFileBytes);
    await this.writeSettings(repo, `${JSON.stringify(next)}\n`);
    return next;
  }

  async #repository(workdir: string, maxFileBytes?: number): Promise<Repo> {
    const repo = await this.open(workdir, maxFileBytes ?? (await this.settings(workdir)).maxFileBytes);
    // A restore a crash interrupted is finished before anything else reads or writes the project.
    await this.finishInterruptedRestore(repo);
    return repo;
  }

  async beforeTurn(workdir: string): Promise<ProjectSnapshot> {
    const settings = await this.settings(workdir);
    if (settings.mode === 'auto-commit') {
      const snapshot = await this.#autoCommit.beforeTurn(workdir);
      // A shadow failure never blocks the auto-commit: the turn then has no snapshots.
      const before = await this.#before(workdir, settings).catch(() => null);
      return before === null ? snapshot : { ...snapshot, shadowBefore: before };
    }
    const before = await this.#before(workdir, settings);
    return { ...(await this.#shadowState(workdir)), shadowBefore: before };
  }

  /** What {@link beforeTurn} would say, taking no snapshot: in shadow mode nothing of the user's blocks anything. */
  async inspect(workdir: string): Promise<ProjectSnapshot> {
    const settings = await this.settings(workdir);
    if (settings.mode === 'auto-commit') return this.#autoCommit.inspect(workdir);
    return this.#shadowState(workdir);
  }

  async #shadowState(workdir: string): Promise<ProjectSnapshot> {
    return shadowModeSnapshot(workdir, await this.isRepository(workdir));
  }

  async #before(workdir: string, settings: ProjectShadowSettings): Promise<string> {
    const repo = await this.#repository(workdir, settings.maxFileBytes);
    return (await repo.snapshot({ kind: 'before' })).commit;
  }

  async afterTurn(input: AfterTurnInput): Promise<AfterTurnResult> {
    checkTurn(input);
    const given = input.snapshot?.shadowBefore;
    if (given !== undefined && !SNAPSHOT_ID.test(given))
      throw new EntityGitError('INVALID_OPTION', 'snapshot.shadowBefore is not a snapshot id', {});
    const settings = await this.settings(input.workdir);
    if (settings.mode === 'auto-commit') {
      await this.#after(input, settings).catch(() => null);
      return this.#autoCommit.afterTurn(input);
    }
    const agentPaths = await this.#after(input, settings);
    return {
      status: 'skipped',
      reason: 'shadow-mode',
      warning: null,
      deferred: [],
      ignoredPaths: [],
      userPaths: [],
      agentPaths,
    };
  }

  /** The turn's after-snapshot and its refs; returns the tools' paths as recorded. */
  async #after(input: AfterTurnInput, settings: ProjectShadowSettings): Promise<string[]> {
    const repo = await this.#repository(input.workdir, settings.maxFileBytes);
    const agentPaths = this.toolPaths(input.workdir, repo.workdir, input.touchedPaths);
    await repo.exclusive(async () => {
      // Without a before-snapshot the newest one stands in: the turn's changes are then all since it.
      const before =
        input.snapshot?.shadowBefore ?? (await repo.tip()) ?? (await repo.snapshotHeld({ kind: 'before' })).commit;
      const after = await repo.snapshotHeld({
        kind: 'after',
        sessionId: input.sessionId,
        turn: input.turn,
        sessionCommit: input.sessionCommit ?? null,
        before,
        agentPaths,
      });
      await this.setTurnRefs(repo, { sessionId: input.sessionId, turn: input.turn, before, after: after.commit });
    });
    // Pruned when the project holds a tenth more turns than it keeps, so the sweep is not paid every
    // turn; between prunes, what the snapshots wrote loose is packed once it is much.
    const keep = this.#keepTurns;
    if ((await this.turnsHeld(repo)) > keep + Math.max(1, Math.floor(keep / 10))) await this.prune(repo, keep);
    else await this.compact(repo);
    return agentPaths;
  }

  /** Keeps the newest `keep` turns' snapshots of the project (default `keepTurns`) and drops what nothing reaches. */
  async pruneSnapshots(workdir: string, keep?: number): Promise<PruneResult> {
    return this.prune(await this.#repository(workdir), keep ?? this.#keepTurns);
  }

  revertAgentTurn(input: RevertInput): Promise<RevertResult> {
    return this.#autoCommit.revertAgentTurn(input);
  }

  agentCommits(input: AgentCommitsInput): Promise<AgentCommitsResult> {
    return this.#autoCommit.agentCommits(input);
  }

  /** The paths a turn changed, with added and removed lines and who changed each. */
  async listTurnFiles(at: TurnAt): Promise<TurnFiles> {
    checkTurn(at);
    return this.turnFiles(await this.#repository(at.workdir), at);
  }

  /** One file's unified diff across a turn. */
  async turnFileDiff(at: TurnAt & { path: string }): Promise<string> {
    checkTurn(at);
    return this.fileDiff(await this.#repository(at.workdir), at);
  }

  /** Puts the files a turn changed back to their state before it (the rules: shadow-restore-rules.ts). */
  async restoreTurnFiles(at: TurnAt & { paths?: readonly string[] }): Promise<RestoreResult> {
    checkTurn(at);
    const repo = await this.#repository(at.workdir);
    return this.restore(repo, { sessionId: at.sessionId, turn: at.turn, ...(at.paths ? { paths: at.paths } : {}) });
  }

  /** Undoes a restore, given its `restored` snapshot. */
  async undoRestore(input: { workdir: string; restored: string }): Promise<RestoreResult> {
    if (!SNAPSHOT_ID.test(input.restored))
      throw new EntityGitError(
        'INVALID_ARGUMENT',
        `restored must be a snapshot id (40 hex digits), got ${JSON.stringify(input.restored)}`,
        {},
      );
    return this.undo(await this.#repository(input.workdir), input.restored);
  }

  /**
   * Between prunes: packs the objects the snapshots wrote loose, where the engine packs. The default
   * does nothing: the object engine writes loose objects only.
   */
  protected async compact(_repo: Repo): Promise<void> {}

  /** The project's saved settings (`project.json` in its shadow directory), or null. */
  protected abstract readSettings(workdir: string): Promise<string | null>;
  protected abstract writeSettings(repo: Repo, text: string): Promise<void>;
  protected abstract open(workdir: string, maxFileBytes: number): Promise<Repo>;
  /** Finishes a restore a crash interrupted, if its journal is there. */
  protected abstract finishInterruptedRestore(repo: Repo): Promise<void>;
  /** Whether the workdir holds a `.git`. */
  protected abstract isRepository(workdir: string): Promise<boolean>;
  /** The tools' paths, relative to the workdir with `/`; paths outside it are dropped. */
  protected abstract toolPaths(given: string, real: string, paths: readonly string[]): string[];
  /** Sets the turn's two refs; called inside `exclusive`. */
  protected abstract setTurnRefs(repo: Repo, turn: TurnSnapshots): Promise<void>;
  /** How many turns' snapshots the project holds. */
  protected abstract turnsHeld(repo: Repo): Promise<number>;
  protected abstract prune(repo: Repo, keep: number): Promise<PruneResult>;
  protected abstract turnFiles(repo: Repo, at: TurnAt): Promise<TurnFiles>;
  protected abstract fileDiff(repo: Repo, at: TurnAt & { path: string }): Promise<string>;
  protected abstract restore(
    repo: Repo,
    at: { sessionId: string; turn: number; paths?: readonly string[] },
  ): Promise<RestoreResult>;
  protected abstract undo(repo: Repo, restored: string): Promise<RestoreResult>;
}
