// The project's mode, shadow or auto-commit, around the project auto-commit: every turn of a
// session bound to a project is snapshotted in the project's shadow repository, before and after,
// in both modes; in auto-commit mode the agent's edits are also committed into the user's own
// repository as before. docs/design.md §7, "Shadow mode"; the default is argued there.
import { readFile, stat, writeFile } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import type {
  AfterTurnInput,
  AfterTurnResult,
  AgentCommitsInput,
  AgentCommitsResult,
  ProjectGit,
  ProjectSnapshot,
  RevertInput,
  RestoreResult,
  RevertResult,
  TurnAt,
  TurnFiles,
  TurnFilesSource,
} from '@entity-git/core';
import { EntityGitError } from '@entity-git/core';
import { DEFAULT_MAX_FILE_BYTES, ShadowRepository, shadowDirOf } from './shadow-repository.js';
import { DEFAULT_KEEP_TURNS, type PruneResult, pruneSnapshots } from './shadow-prune.js';
import { finishInterruptedRestore, restoreTurnFiles, undoRestore } from './shadow-restore.js';
import { hasJournal } from './shadow-restore-journal.js';
import { listTurnFiles, turnFileDiff, turnRef } from './shadow-turn-files.js';
import { createNodeProjectGit } from './workdir-coordination.js';
import { PROJECT_MODES, type ProjectMode, type ProjectShadowSettings, shadowModeSnapshot } from '../shadow-names.js';

export { PROJECT_MODES, type ProjectMode, type ProjectShadowSettings } from '../shadow-names.js';

export interface ShadowProjectGitOptions {
  /** entity-git's directory for shadow repositories, one per project (created 0700). */
  root: string;
  /** The auto-commit used for projects in `auto-commit` mode. Default `createNodeProjectGit()`. */
  autoCommit?: ProjectGit;
  /** The mode of a project never configured. Default `shadow`. */
  defaultMode?: ProjectMode;
  /** The size cap of a project never configured. Default 5 MiB. */
  maxFileBytes?: number;
  /** The git binary. Default `git`. */
  gitPath?: string;
  /** Keep the newest this many turns' snapshots per project; older ones are pruned and the repository repacked. Default 100. */
  keepTurns?: number;
  /** Watch each project's work tree so snapshots look only at what changed (`ShadowRepositoryOptions.watch`). Default true. */
  watch?: boolean;
}

export class ShadowProjectGit implements ProjectGit, TurnFilesSource {
  readonly #options: ShadowProjectGitOptions;
  readonly #autoCommit: ProjectGit;

  constructor(options: ShadowProjectGitOptions) {
    this.#options = options;
    this.#autoCommit = options.autoCommit ?? createNodeProjectGit();
  }

  get engine(): string {
    return this.#autoCommit.engine;
  }

  /** The project's mode and size cap: as configured, else the defaults. */
  async settings(workdir: string): Promise<ProjectShadowSettings> {
    const defaults: ProjectShadowSettings = {
      mode: this.#options.defaultMode ?? 'shadow',
      maxFileBytes: this.#options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
    };
    const dir = await shadowDirOf(this.#options.root, workdir).catch(() => null);
    if (dir === null) return defaults;
    const text = await readFile(join(dir, 'project.json'), 'utf8').catch(() => null);
    if (text === null) return defaults;
    const saved = JSON.parse(text) as Partial<ProjectShadowSettings>;
    return { ...defaults, ...saved };
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
    await writeFile(join(repo.dir, 'project.json'), `${JSON.stringify(next)}\n`, { mode: 0o600 });
    return next;
  }

  async #repository(workdir: string, maxFileBytes?: number): Promise<ShadowRepository> {
    const cap = maxFileBytes ?? (await this.settings(workdir)).maxFileBytes;
    const repo = await ShadowRepository.open({
      root: this.#options.root,
      workdir,
      maxFileBytes: cap,
      ...(this.#options.gitPath ? { gitPath: this.#options.gitPath } : {}),
      ...(this.#options.watch === false ? { watch: false } : {}),
    });
    // A restore a crash interrupted is finished before anything else reads or writes the project.
    if (await hasJournal(repo)) await repo.exclusive(() => finishInterruptedRestore(repo));
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
    return shadowModeSnapshot(workdir, (await stat(join(workdir, '.git')).catch(() => null)) !== null);
  }

  async #before(workdir: string, settings: ProjectShadowSettings): Promise<string> {
    const repo = await this.#repository(workdir, settings.maxFileBytes);
    return (await repo.snapshot({ kind: 'before' })).commit;
  }

  async afterTurn(input: AfterTurnInput): Promise<AfterTurnResult> {
    checkTurn(input);
    const given = input.snapshot?.shadowBefore;
    if (given !== undefined && !/^[0-9a-f]{40}$/.test(given))
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
    const agentPaths = toolPaths(input.workdir, repo.workdir, input.touchedPaths);
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
      await repo.git.git(['update-ref', turnRef(input.sessionId, input.turn, 'before'), before]);
      await repo.git.git(['update-ref', turnRef(input.sessionId, input.turn, 'after'), after.commit]);
    });
    await this.#bound(repo);
    return agentPaths;
  }

  /** Prunes when the project holds a tenth more turns than it keeps, so the repack is not paid every turn. */
  async #bound(repo: ShadowRepository): Promise<void> {
    const keep = this.#options.keepTurns ?? DEFAULT_KEEP_TURNS;
    const refs = await repo.git.git(['for-each-ref', '--format=%(refname)', 'refs/turns/']);
    const turns = refs.split('\n').filter((r) => r.endsWith('/after')).length;
    if (turns > keep + Math.max(1, Math.floor(keep / 10))) await pruneSnapshots(repo, keep);
  }

  /** Keeps the newest `keep` turns' snapshots of the project (default `keepTurns`) and repacks. */
  async pruneSnapshots(workdir: string, keep?: number): Promise<PruneResult> {
    return pruneSnapshots(await this.#repository(workdir), keep ?? this.#options.keepTurns ?? DEFAULT_KEEP_TURNS);
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
    return listTurnFiles(await this.#repository(at.workdir), at.sessionId, at.turn);
  }

  /** One file's unified diff across a turn. */
  async turnFileDiff(at: TurnAt & { path: string }): Promise<string> {
    checkTurn(at);
    return turnFileDiff(await this.#repository(at.workdir), at.sessionId, at.turn, at.path);
  }

  /** Puts the files a turn changed back to their state before it (see shadow-restore.ts). */
  async restoreTurnFiles(at: TurnAt & { paths?: readonly string[] }): Promise<RestoreResult> {
    checkTurn(at);
    const repo = await this.#repository(at.workdir);
    return restoreTurnFiles(repo, { sessionId: at.sessionId, turn: at.turn, ...(at.paths ? { paths: at.paths } : {}) });
  }

  /** Undoes a restore, given its `restored` snapshot. */
  async undoRestore(input: { workdir: string; restored: string }): Promise<RestoreResult> {
    if (!/^[0-9a-f]{40}$/.test(input.restored))
      throw new EntityGitError(
        'INVALID_ARGUMENT',
        `restored must be a snapshot id (40 hex digits), got ${JSON.stringify(input.restored)}`,
        {},
      );
    return undoRestore(await this.#repository(input.workdir), input.restored);
  }
}

/** A session id goes into trailers and a turn into ref names: no line breaks, a whole turn number. */
function checkTurn(at: { sessionId: string; turn: number }): void {
  if (typeof at.sessionId !== 'string' || !/^[^\x00-\x1f\x7f]{1,512}$/.test(at.sessionId))
    throw new EntityGitError('INVALID_ID', `not a session id: ${JSON.stringify(at.sessionId)}`, {});
  if (!Number.isSafeInteger(at.turn) || at.turn < 1)
    throw new EntityGitError('INVALID_ARGUMENT', `turn must be a whole number ≥ 1, got ${at.turn}`, {});
}

/** The tools' paths, relative to the workdir with `/`; paths outside it are dropped. */
function toolPaths(given: string, real: string, paths: readonly string[]): string[] {
  const out = new Set<string>();
  for (const p of paths) {
    const abs = isAbsolute(p) ? p : join(given, p);
    for (const base of [given, real]) {
      const rel = relative(base, abs);
      if (rel && !rel.startsWith('..') && !isAbsolute(rel)) {
        out.add(rel.split(sep).join('/'));
        break;
      }
    }
  }
  return [...out].sort();
}
