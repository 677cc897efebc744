// The project's mode, shadow or auto-commit, on the object engine: the same contract as the native
// engine's `ShadowProjectGit` (node/shadow-project-git.ts) — every turn of a session bound to a
// project snapshotted before and after, in both modes, the turn's files listed, diffed and
// restored — over a `Storage`, so it runs in the browser and in Node without git.
// docs/design.md §7, "Shadow mode" and "The object engine's shadow mode".
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
import { type Codec, EntityGitError, joinPath, type LockOptions, type Storage, Store } from '@entity-git/git';

import { ObjectEngine } from '../object-engine.js';
import { normalizeAbsolute } from '../paths.js';
import { createProjectGit } from '../project-git.js';
import {
  DEFAULT_KEEP_TURNS,
  DEFAULT_MAX_FILE_BYTES,
  PROJECT_MODES,
  type ProjectMode,
  type ProjectShadowSettings,
  shadowModeSnapshot,
  turnRef,
} from '../shadow-names.js';
import { ObjectShadowRepository } from './object-shadow-repository.js';
import { type PruneResult, pruneSnapshots } from './prune.js';
import { finishInterruptedRestore, hasInterruptedRestore, restoreTurnFiles, undoRestore } from './restore.js';
import { listTurnFiles, turnFileDiff } from './turn-files.js';

export interface ObjectShadowProjectGitOptions {
  /** The storage holding the workdirs and the shadow root (node:fs, or the browser's IndexedDB). */
  storage: Storage;
  /** entity-git's directory for shadow repositories, one per project. */
  root: string;
  /** The auto-commit used for projects in `auto-commit` mode. Default: `createProjectGit` over the object engine on `storage`. */
  autoCommit?: ProjectGit;
  /** The mode of a project never configured. Default `shadow`. */
  defaultMode?: ProjectMode;
  /** The size cap of a project never configured. Default 5 MiB. */
  maxFileBytes?: number;
  /** Keep the newest this many turns' snapshots per project. Default 100. */
  keepTurns?: number;
  /** Hashing and compression. Default: the storage's, else the portable pure-JS codec. */
  codec?: Codec;
  /** The clock of snapshot commits, in ms. Default `Date.now`. */
  now?: () => number;
  /** The shadow repositories' lock files. Default `LOCK_DEFAULTS.ref`. */
  lock?: LockOptions;
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
    const abs = normalizeAbsolute(p.startsWith('/') ? p : `${given}/${p}`);
    for (const base of [normalizeAbsolute(given), real]) {
      if (abs.startsWith(`${base}/`)) {
        out.add(abs.slice(base.length + 1));
        break;
      }
    }
  }
  return [...out].sort();
}

export class ObjectShadowProjectGit implements ProjectGit, TurnFilesSource {
  readonly #options: ObjectShadowProjectGitOptions;
  readonly #store: Store;
  readonly #autoCommit: ProjectGit;

  constructor(options: ObjectShadowProjectGitOptions) {
    this.#options = options;
    this.#store = new Store(options.storage);
    this.#autoCommit =
      options.autoCommit ??
      createProjectGit({
        engine: new ObjectEngine({ storage: options.storage, ...(options.codec ? { codec: options.codec } : {}) }),
      });
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
    const dir = await ObjectShadowRepository.dirOf(this.#store, this.#options.root, workdir);
    const text = await this.#store.readText(joinPath(dir, 'project.json'));
    return text === null ? defaults : { ...defaults, ...(JSON.parse(text) as Partial<ProjectShadowSettings>) };
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
    await this.#store.writeAtomic(joinPath(repo.dir, 'project.json'), `${JSON.stringify(next)}\n`);
    return next;
  }

  #open(workdir: string, maxFileBytes: number): Promise<ObjectShadowRepository> {
    const { storage, root, codec, now, lock } = this.#options;
    return ObjectShadowRepository.open({
      storage,
      root,
      workdir,
      maxFileBytes,
      ...(codec ? { codec } : {}),
      ...(now ? { now } : {}),
      ...(lock ? { lock } : {}),
    });
  }

  async #repository(workdir: string, maxFileBytes?: number): Promise<ObjectShadowRepository> {
    const repo = await this.#open(workdir, maxFileBytes ?? (await this.settings(workdir)).maxFileBytes);
    // A restore a crash interrupted is finished before anything else reads or writes the project.
    if (await hasInterruptedRestore(repo)) await repo.exclusive(() => finishInterruptedRestore(repo));
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
    return shadowModeSnapshot(
      workdir,
      (await this.#store.lstat(joinPath(normalizeAbsolute(workdir), '.git'))) !== null,
    );
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
      await repo.setRef(turnRef(input.sessionId, input.turn, 'before'), before);
      await repo.setRef(turnRef(input.sessionId, input.turn, 'after'), after.commit);
    });
    const keep = this.#options.keepTurns ?? DEFAULT_KEEP_TURNS;
    // Pruned when the project holds a tenth more turns than it keeps, so the sweep is not paid every turn.
    const turns = [...(await repo.refsUnder('refs/turns/')).keys()].filter((r) => r.endsWith('/after')).length;
    if (turns > keep + Math.max(1, Math.floor(keep / 10))) await pruneSnapshots(repo, keep);
    return agentPaths;
  }

  /** Keeps the newest `keep` turns' snapshots of the project (default `keepTurns`) and deletes what nothing reaches. */
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

  /** Puts the files a turn changed back to their state before it (see restore.ts). */
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
