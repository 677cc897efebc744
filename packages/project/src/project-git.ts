import { EntityGitError, isEntityGitError } from '@entity-git/git';
import type {
  AfterTurnInput,
  AfterTurnResult,
  AgentCommitsInput,
  AgentCommitsResult,
  Logger,
  ProjectGit,
  ProjectSnapshot,
  RecoveredCommit,
  RevertInput,
  RevertResult,
} from '@entity-git/core';
import { agentCommits } from './agent-commit.js';
import { memoryLedger } from './agent-ledger.js';
import { lockKey, ownersOf, repoRefusal, skip } from './decision.js';
import { checkOptions, requireWorkdir, validAgentCommits, validRevert, validTurn, type Turn } from './input.js';
import { PendingJournal, memoryJournal, type Journal } from './journal.js';
import type { ProjectLock } from './project-coordination.js';
import type { ProjectGitEngine, RepoState, WorkdirState } from './project-git-engine.js';
import type { ProjectGitOptions } from './project-git-types.js';
import { serialized } from './project-mutex.js';
import { observeAfterTurn, observeRevert } from './project-observe.js';
import { inFlightRecovery } from './recovery.js';
import { AgentCommitFinder } from './revert-find.js';
import { AgentUndo, refused, short, workdirRefusal } from './revert-undo.js';
import { Retry, TurnCommitter, type Seen } from './turn-commit.js';

export { UNCOMMITTED_CHANGES_WARNING, type ProjectGitOptions } from './project-git-types.js';
export { projectCommitMessage, revertCommitMessage, parseAgentCommit } from './commit-message.js';
export { memoryJournal } from './journal.js';
export { memoryLedger, type AgentCommitLedger, type AgentCommitEntry } from './agent-ledger.js';

const DAY = 86_400_000;
/** Upper bound on attempts when the branch or a file moves between the decision and the commit (or the undo). */
const ATTEMPTS = 4;

/**
 * The project auto-commit logic (see docs/design.md, 'Safety rules': the user's project repository
 * is sacred), the one implementation; an engine supplies git. Options are checked here
 * (`INVALID_OPTION` for a bad one). See `docs/project-git.md` for the rules and the decisions behind them.
 */
export function createProjectGit(options: ProjectGitOptions): ProjectGit {
  return new AutoCommitProjectGit(options);
}

class AutoCommitProjectGit implements ProjectGit {
  readonly engine: string;
  readonly #engine: ProjectGitEngine;
  readonly #now: () => number;
  readonly #lock: ProjectLock;
  readonly #logger: Logger | undefined;
  readonly #pending: PendingJournal;
  readonly #finishInFlight: (repo: RepoState, j: Journal) => Promise<RecoveredCommit[]>;
  readonly #turns: TurnCommitter;
  readonly #finder: AgentCommitFinder;
  readonly #undo: AgentUndo;

  constructor(options: ProjectGitOptions) {
    const { engine, product, email, author, withoutSnapshot } = checkOptions(options);
    const now = options.now ?? Date.now;
    const ledger = options.ledger ?? memoryLedger();
    this.engine = engine.name;
    this.#engine = engine;
    this.#now = now;
    this.#lock = serialized(options.lock);
    this.#logger = options.logger;
    const pending = new PendingJournal(
      engine,
      options.journal ?? memoryJournal(),
      now,
      options.pendingTtlMs ?? 7 * DAY,
    );
    const finishInFlight = inFlightRecovery(engine);
    this.#pending = pending;
    this.#finishInFlight = finishInFlight;
    this.#turns = new TurnCommitter({
      engine,
      pending,
      finishInFlight,
      commitFiles: agentCommits({ engine, product, email, author, now, ledger }),
      now,
      withoutSnapshot,
      initOptions: options.initialBranch === undefined ? {} : { initialBranch: options.initialBranch },
    });
    this.#finder = new AgentCommitFinder(engine, product, ledger);
    this.#undo = new AgentUndo(engine, { email, author, now });
  }

  /** What is uncommitted in the workdir before a turn, split by owner (see {@link ProjectGit.beforeTurn}). */
  async beforeTurn(workdirInput: string): Promise<ProjectSnapshot> {
    const workdir = requireWorkdir(workdirInput);
    const first = await this.#engine.inspect(workdir);
    if (first.kind === 'missing' || first.kind === 'not-a-directory') return outside(this.#now(), workdir, first.kind);
    return this.#lock(lockKey(first, workdir), async () => {
      const state = await this.#engine.inspect(workdir);
      if (state.kind === 'not-a-repository')
        return outside(this.#now(), workdir, state.kind, [...state.entries].sort());
      if (state.kind !== 'repository') return outside(this.#now(), workdir, state.kind);
      const { repo } = state;
      if (repo.unsupported !== null)
        return snapshotOf(this.#now(), { workdir, state: state.kind, root: repo.root, head: repo.head, dirty: [] });
      return this.#repositorySnapshot(workdir, repo);
    });
  }

  /** The auto-commit records nothing of its own before a turn: this is {@link beforeTurn}'s answer. */
  inspect(workdir: string): Promise<ProjectSnapshot> {
    return this.beforeTurn(workdir);
  }

  /** Commit the agent's edits of a turn when that is safe (see {@link ProjectGit.afterTurn}). */
  afterTurn(input: AfterTurnInput): Promise<AfterTurnResult> {
    const run = () => this.#afterTurn(input);
    return this.#logger === undefined ? run() : observeAfterTurn(this.#logger, input, run);
  }

  /** Take back what the agent committed for a turn (see {@link ProjectGit.revertAgentTurn}). */
  revertAgentTurn(input: RevertInput): Promise<RevertResult> {
    const run = () => this.#revert(input);
    return this.#logger === undefined ? run() : observeRevert(this.#logger, input, run);
  }

  /** The session's agent commits in the project (read-only): on the current branch, then those an undo moved it back over. */
  async agentCommits(input: AgentCommitsInput): Promise<AgentCommitsResult> {
    const { workdir, sessionId, limit } = validAgentCommits(input);
    const state = await this.#engine.inspect(workdir);
    if (state.kind !== 'repository' || state.repo.branch === null || state.repo.unsupported !== null)
      return Object.freeze({ branch: state.kind === 'repository' ? state.repo.branch : null, commits: [] });
    return Object.freeze({
      branch: state.repo.branch,
      commits: Object.freeze(await this.#finder.list(state.repo, sessionId, limit)),
    });
  }

  /** The snapshot of a supported repository, under its lock: the dirty paths split into the user's and the agents' pending ones. */
  async #repositorySnapshot(workdir: string, repo: RepoState): Promise<ProjectSnapshot> {
    // The one write beforeTurn may make: finishing an interrupted agent commit, so its paths are not taken for the user's.
    // A lock file someone's git holds (or a killed one left) stops only that: the record waits for afterTurn, the snapshot is taken as things are (the agent's paths then count as the user's: the safe side).
    const j = await this.#pending.open(repo.root);
    const recovered = await this.#finishInFlight(repo, j).catch((err: unknown) => {
      if (isEntityGitError(err, 'REF_LOCKED')) return [];
      throw err;
    });
    const dirty = (await this.#engine.status(repo)).map((c) => c.path);
    const pending = this.#pending.fresh(j);
    const owners = ownersOf(pending, await this.#pending.currentOf(repo, dirty, pending));
    const taken = snapshotOf(this.#now(), {
      workdir,
      state: 'repository',
      root: repo.root,
      head: repo.head,
      dirty: dirty.filter((p) => !owners.has(p)),
      agentDirty: dirty.filter((p) => owners.has(p)),
    });
    return recovered.length === 0 ? taken : Object.freeze({ ...taken, recovered: Object.freeze(recovered) });
  }

  async #afterTurn(input: AfterTurnInput): Promise<AfterTurnResult> {
    const t = validTurn(input);
    const recovered: RecoveredCommit[] = [];
    const withRecovered = (result: AfterTurnResult): AfterTurnResult =>
      recovered.length === 0 ? result : Object.freeze({ ...result, recovered: Object.freeze([...recovered]) });
    let seen: Seen = { mine: [], ignored: [] };
    return retried({
      attempt: async () => {
        seen = { mine: [], ignored: [] };
        return withRecovered(await this.#turnAttempt(t, recovered, seen));
      },
      // The engines move nothing then (an amend whose editor is open, or a lock a killed git left): a skip, not a failure.
      locked: (what) =>
        withRecovered(
          skip(
            'repository-locked',
            `another git is using the repository (${what} exists), the agent's edits won't be auto-committed for now`,
            { agentPaths: [...seen.mine], ignoredPaths: [...seen.ignored] },
          ),
        ),
      kept: () =>
        new EntityGitError(
          'PROJECT_GIT_ERROR',
          `[${this.engine}] ${t.workdir} kept changing while the agent's commit was prepared`,
          { workdir: t.workdir },
        ),
    });
  }

  /** One look at the workdir and, under its lock, the decision and the commits it allows. */
  async #turnAttempt(t: Turn, recovered: RecoveredCommit[], seen: Seen): Promise<AfterTurnResult> {
    const first = await this.#engine.inspect(t.workdir);
    if (first.kind === 'missing')
      return skip(
        'workdir-missing',
        `the project directory ${t.workdir} does not exist, the agent's edits won't be auto-committed`,
      );
    if (first.kind === 'not-a-directory')
      return skip(
        'workdir-not-a-directory',
        `the project path ${t.workdir} is not a directory, the agent's edits won't be auto-committed`,
      );
    const key = lockKey(first, t.workdir);
    return this.#lock(key, async () => {
      const opened = await this.#turns.open(t, key, recovered);
      return 'status' in opened ? opened : this.#turns.commit(t, opened, { recovered, seen });
    });
  }

  /**
   * The undo: resolves how (`reset`, `reverted`) or that it was done before (`already-reverted`);
   * a refusal throws, with nothing touched: `NOT_AGENT_COMMIT`, `AGENT_COMMIT_NOT_FOUND`,
   * `COMMIT_NOT_FOUND`, `REVERT_CONFLICT`, `REVERT_REFUSED` (`data.reason`).
   */
  async #revert(input: RevertInput): Promise<RevertResult> {
    const want = validRevert(input);
    return retried({
      attempt: () => this.#revertAttempt(want),
      locked: (what, err) => {
        throw new EntityGitError(
          'REVERT_REFUSED',
          `another git is using the repository (${what} exists): nothing was undone`,
          { reason: 'repository-locked', paths: [], lock: err.data.lock ?? null },
          { cause: err },
        );
      },
      kept: () =>
        new EntityGitError('PROJECT_GIT_ERROR', `[${this.engine}] ${want.workdir} kept changing during the undo`, {
          workdir: want.workdir,
        }),
    });
  }

  /** One look at the workdir and, under its lock, the agent commit located and taken back. */
  async #revertAttempt(want: ReturnType<typeof validRevert>): Promise<RevertResult> {
    const first = await this.#engine.inspect(want.workdir);
    if (first.kind !== 'repository') workdirRefusal(first, want.workdir);
    const key = lockKey(first, want.workdir);
    return this.#lock(key, async () => {
      const state = await this.#engine.inspect(want.workdir);
      if (lockKey(state, want.workdir) !== key) throw new Retry();
      if (state.kind !== 'repository') return workdirRefusal(state, want.workdir);
      const repo = state.repo;
      const before = repoRefusal(repo, this.engine);
      if (before !== null) return refused(before);
      // An earlier agent commit (or undo) whose process died after its branch moved gets its index entries first.
      const j = await this.#pending.open(repo.root);
      await this.#finishInFlight(repo, j);
      if (repo.head === null)
        throw new EntityGitError('AGENT_COMMIT_NOT_FOUND', 'the branch has no commit yet', { branch: repo.branch });
      const { found, above, resetBy } = await this.#finder.locate(repo, want);
      const base = { sessionId: want.sessionId, turn: found.facts.turn, commit: found.record.id, branch: repo.branch! };
      if (resetBy)
        return Object.freeze({
          ...base,
          kind: 'already-reverted' as const,
          by: 'reset' as const,
          revertCommit: null,
          paths: [],
          message: `The agent's edits of turn ${base.turn} were already undone: ${short(base.commit)} is no longer on the branch (an undo moved it back).`,
        });
      return this.#undo.undo({ repo, j, base }, { found, above });
    });
  }
}

/**
 * Runs `attempt` again while the branch, a file or the repository itself moves between looking
 * and writing, {@link ATTEMPTS} times at most (then `kept()` is thrown for a workdir that moved,
 * the engine's own error for the rest). Someone's git holding `index.lock` or the branch's lock
 * (the engines write nothing then) is answered by `locked`, with the lock's name.
 */
async function retried<T>(how: {
  attempt: () => Promise<T>;
  locked: (what: string, err: EntityGitError) => T;
  kept: () => EntityGitError;
}): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await how.attempt();
    } catch (err) {
      if (isEntityGitError(err, 'REF_LOCKED') && err.data.committed !== true)
        return how.locked(typeof err.data.lock === 'string' ? err.data.lock : 'a lock file', err);
      const moved =
        err instanceof Retry || isEntityGitError(err, 'REF_CONFLICT') || isEntityGitError(err, 'WORKTREE_CHANGED');
      if (!moved) throw err;
      if (n >= ATTEMPTS) throw err instanceof Retry ? how.kept() : err;
    }
  }
}

/** What a snapshot records besides its time: a repository's `root` and `head` (else null), its dirty paths split by owner. */
interface SnapshotFacts {
  workdir: string;
  state: WorkdirState['kind'];
  root: string | null;
  head: string | null;
  dirty: string[];
  /** Dirty paths an agent's pending edit owns. Default none. */
  agentDirty?: string[];
}

/** A snapshot taken at `takenAt`, frozen. */
function snapshotOf(takenAt: number, facts: SnapshotFacts): ProjectSnapshot {
  const { workdir, root, state, head, dirty, agentDirty = [] } = facts;
  return Object.freeze({
    version: 1 as const,
    workdir,
    root,
    state,
    head,
    takenAt,
    dirty: Object.freeze(dirty),
    agentDirty: Object.freeze(agentDirty),
  });
}

/** The snapshot of a workdir that holds no repository git can read (no root, no head). */
const outside = (
  takenAt: number,
  workdir: string,
  state: WorkdirState['kind'],
  dirty: string[] = [],
): ProjectSnapshot => snapshotOf(takenAt, { workdir, state, root: null, head: null, dirty });
