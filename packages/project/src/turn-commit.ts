import { EntityGitError } from '@entity-git/git';
import type { AgentChange } from './agent-commit.js';
import {
  OPERATION_NAMES,
  OPERATION_ORDER,
  classify,
  lockKey,
  ownersOf,
  skip,
  userBefore,
  type UserBefore,
} from './decision.js';
import type { Turn } from './input.js';
import { toRepoPath } from './paths.js';
import type { PendingEdit } from './project-coordination.js';
import type { Journal, PendingJournal } from './journal.js';
import type { CommitDone, FileState, ProjectGitEngine, RepoState, WorkdirState } from './project-git-engine.js';
import type { AfterTurnResult, ProjectCommit, RecoveredCommit } from '@entity-git/core';
import { UNCOMMITTED_CHANGES_WARNING } from './project-git-types.js';

/** The workdir changed between the first look and taking its lock: look again. */
export class Retry extends Error {}

/** A repository a turn's edits can be committed into, with its journal open. */
export interface OpenRepository {
  readonly repo: RepoState;
  readonly j: Journal;
}

/** The agent's paths and the ignored ones as far as an attempt got: what a `repository-locked` skip reports. */
export interface Seen {
  mine: readonly string[];
  ignored: readonly string[];
}

/** What the check of the tools' reported bytes found. */
interface Written {
  /** The agent's files that hold other bytes than the tools reported: edited during the turn by someone else. */
  editedDuring: string[];
  /** The agent's files that hold the reported bytes: what the commit expects; undefined when nothing was checked. */
  expectMine: FileState[] | undefined;
  /** `mine` hashed, when the check did it. */
  hashedMine: FileState[] | null;
}

/** What a {@link TurnCommitter} works with: the engine, the journal of pending edits, and the options that shape a commit. */
export interface TurnCommitterParts {
  engine: ProjectGitEngine;
  pending: PendingJournal;
  /** Finishing agent commits a crash interrupted (recovery.ts). */
  finishInFlight(repo: RepoState, j: Journal): Promise<RecoveredCommit[]>;
  /** One agent commit (agent-commit.ts). */
  commitFiles(repo: RepoState, j: Journal, change: AgentChange): Promise<CommitDone | null>;
  now: () => number;
  withoutSnapshot: 'skip' | 'trust-touched';
  initOptions: { readonly initialBranch?: string };
}

/**
 * A turn's commit under its project's lock: the repository opened (made on the agent's first
 * edit), the decision taken, the pending edits and the turn's own committed when nothing of the
 * user's is in the way.
 */
export class TurnCommitter {
  readonly #engine: ProjectGitEngine;
  readonly #pending: PendingJournal;
  readonly #finishInFlight: TurnCommitterParts['finishInFlight'];
  readonly #commitFiles: TurnCommitterParts['commitFiles'];
  readonly #now: () => number;
  readonly #withoutSnapshot: TurnCommitterParts['withoutSnapshot'];
  readonly #initOptions: TurnCommitterParts['initOptions'];

  constructor(parts: TurnCommitterParts) {
    this.#engine = parts.engine;
    this.#pending = parts.pending;
    this.#finishInFlight = parts.finishInFlight;
    this.#commitFiles = parts.commitFiles;
    this.#now = parts.now;
    this.#withoutSnapshot = parts.withoutSnapshot;
    this.#initOptions = parts.initOptions;
  }

  /**
   * Under the lock of `key`: the workdir's repository (made on the agent's first edit when there is
   * none), its interrupted agent commits finished into `recovered`, or the skip that stops the turn.
   */
  async open(t: Turn, key: string, recovered: RecoveredCommit[]): Promise<AfterTurnResult | OpenRepository> {
    const engine = this.#engine;
    let state = await engine.inspect(t.workdir);
    if (lockKey(state, t.workdir) !== key) throw new Retry();
    if (state.kind === 'missing' || state.kind === 'not-a-directory') throw new Retry();
    if (state.kind === 'not-a-repository') {
      const made = await this.#init(t);
      if ('status' in made) return made;
      state = made;
    }
    if (state.kind === 'bare')
      return skip(
        'bare-repository',
        `the project directory is a bare repository (or inside a git directory): there is no working tree to commit, the agent's edits won't be auto-committed`,
      );
    const repo = state.repo;
    if (repo.unsupported !== null)
      return skip(
        'unsupported-repository',
        `${engine.name} cannot commit safely into this repository (${repo.unsupported}), the agent's edits won't be auto-committed`,
      );
    // Before anything is looked at: an earlier agent commit whose process died after its branch moved gets its index entries.
    const j = await this.#pending.open(repo.root);
    recovered.push(...(await this.#finishInFlight(repo, j)));
    const op = OPERATION_ORDER.find((o) => repo.operations.includes(o));
    if (op)
      return skip(
        `${op}-in-progress`,
        `${OPERATION_NAMES[op]} is in progress, the agent's edits won't be auto-committed until it is finished`,
      );
    if (repo.branch === null)
      return skip(
        'detached-head',
        `HEAD is detached, the agent's edits won't be auto-committed until a branch is checked out`,
      );
    return { repo, j };
  }

  /** A workdir with no repository: `git init` when the turn edited inside it, else nothing to commit. */
  async #init(t: Turn): Promise<AfterTurnResult | Extract<WorkdirState, { kind: 'repository' }>> {
    const inside = t.touched.map((p) => toRepoPath(p, t.workdir, t.workdir, '')).filter((p): p is string => p !== null);
    // No edit, no repository: a project directory becomes one on the agent's first commit.
    if (inside.length === 0)
      return Object.freeze({
        status: 'skipped' as const,
        reason: 'nothing-to-commit' as const,
        warning: null,
        deferred: [],
        ignoredPaths: [...t.touched],
      });
    await this.#engine.init(t.workdir, this.#initOptions);
    const state = await this.#engine.inspect(t.workdir);
    if (state.kind !== 'repository')
      throw new EntityGitError(
        'PROJECT_GIT_ERROR',
        `[${this.#engine.name}] ${t.workdir} is still no repository after init`,
        {
          workdir: t.workdir,
          state: state.kind,
        },
      );
    return state;
  }
  /**
   * The decision on an open repository and the commits it allows: pending edits first, oldest
   * first, then this turn's; or the skip (and the pending record) when something blocks.
   */
  async commit(
    t: Turn,
    { repo, j }: OpenRepository,
    { recovered, seen }: { recovered: readonly RecoveredCommit[]; seen: Seen },
  ): Promise<AfterTurnResult> {
    const ignoredPaths: string[] = [];
    const touched = new Set<string>();
    for (const p of t.touched) {
      const r = toRepoPath(p, t.workdir, repo.root, repo.prefix);
      if (r === null) ignoredPaths.push(p);
      else touched.add(r);
    }
    const changes = await this.#engine.status(repo);
    const before = userBefore(t, repo);
    // A path an interrupted commit's recovery left staged is the user's staging, whatever the snapshot says.
    const staged = new Set(recovered.flatMap((r) => r.userPaths));
    const { mine, others, inSubmodules } = classify(changes, touched, before, staged);
    seen.mine = mine;
    seen.ignored = ignoredPaths;
    const written = await this.#checkWritten(t, repo, mine);
    if (inSubmodules.length > 0) {
      return skip(
        'submodule-changes',
        `the agent edited files inside the submodule ${inSubmodules.join(', ')}, its edits won't be auto-committed`,
        { agentPaths: mine, ignoredPaths },
      );
    }

    // A change the agent did not make this turn is still an agent's if it holds the exact bytes
    // of a pending edit (another session whose turn ended first, or an earlier blocked turn).
    const pending = this.#pending.fresh(j);
    const current = await this.#pending.currentOf(
      repo,
      others.filter((c) => !c.conflicted && !c.submodule).map((c) => c.path),
      pending,
    );
    const owners = ownersOf(pending, current);
    const userPaths = [
      ...others.filter((c) => c.conflicted || c.submodule || !owners.has(c.path)).map((c) => c.path),
      ...written.editedDuring,
    ].sort();

    if (userPaths.length > 0) {
      await this.#recordPending(t, { repo, j }, { pending, mine, hashedMine: written.hashedMine, before });
      return skip('uncommitted-changes', UNCOMMITTED_CHANGES_WARNING, { userPaths, agentPaths: mine, ignoredPaths });
    }
    if (mine.length > 0 && before === null && this.#withoutSnapshot === 'skip') {
      return skip(
        'no-snapshot',
        `no snapshot of the working tree was taken before the turn, the agent's edits won't be auto-committed`,
        { agentPaths: mine, ignoredPaths },
      );
    }

    // Nothing of the user's is uncommitted: land the pending edits, oldest first, then this turn's.
    const landed = await this.#landPending({ repo, j }, { pending, owners });
    const done =
      mine.length === 0
        ? null
        : await this.#commitFiles(landed.repo, j, {
            who: { ...t, at: this.#now() },
            paths: mine,
            expect: written.expectMine,
          });
    if (done === null)
      return Object.freeze({
        status: 'skipped' as const,
        reason: 'nothing-to-commit' as const,
        warning: null,
        deferred: landed.deferred,
        ignoredPaths,
      });
    return Object.freeze({
      status: 'committed' as const,
      commit: done.commit,
      branch: done.branch,
      sessionId: t.sessionId,
      turn: t.turn,
      paths: done.entries.map((f) => f.path),
      deferred: landed.deferred,
      ignoredPaths,
    });
  }

  /**
   * The bytes the tools reported: a file of the agent's that holds others now was edited during the
   * turn by someone else (the user), and is theirs — taken out of `mine`, in place.
   */
  async #checkWritten(t: Turn, repo: RepoState, mine: string[]): Promise<Written> {
    const editedDuring: string[] = [];
    if (t.written.length === 0 || mine.length === 0) return { editedDuring, expectMine: undefined, hashedMine: null };
    const reported = new Map<string, string | null>();
    for (const [p, oid] of t.written) {
      const r = toRepoPath(p, t.workdir, repo.root, repo.prefix);
      if (r !== null) reported.set(r, oid);
    }
    const expectMine: FileState[] = [];
    const hashedMine = await this.#engine.hashPaths(repo, mine);
    for (const f of hashedMine) {
      if (!reported.has(f.path)) continue;
      if (f.oid === reported.get(f.path)) expectMine.push(f);
      else editedDuring.push(f.path);
    }
    if (editedDuring.length > 0) mine.splice(0, mine.length, ...mine.filter((p) => !editedDuring.includes(p)));
    return { editedDuring, expectMine, hashedMine };
  }

  /** A blocked turn's edits kept as pending (when the snapshot, or the `trust-touched` option, says they are the agent's). */
  async #recordPending(
    t: Turn,
    { repo, j }: OpenRepository,
    s: { pending: PendingEdit[]; mine: string[]; hashedMine: FileState[] | null; before: UserBefore | null },
  ): Promise<void> {
    const { pending, mine } = s;
    if (mine.length === 0 || (s.before === null && this.#withoutSnapshot !== 'trust-touched')) return;
    const files = s.hashedMine?.filter((f) => mine.includes(f.path)) ?? (await this.#engine.hashPaths(repo, mine));
    const kept = pending
      .map((e) => ({ ...e, files: e.files.filter((f) => !mine.includes(f.path)) }))
      .filter((e) => e.files.length > 0);
    await this.#pending.write(j, [
      ...kept,
      {
        sessionId: t.sessionId,
        turn: t.turn,
        subject: t.subject,
        model: t.model,
        sessionCommit: t.sessionCommit,
        at: this.#now(),
        files,
      },
    ]);
  }

  /** The pending edits committed, oldest first, each of the files it owns; the journal emptied of them. */
  async #landPending(
    { repo: start, j }: OpenRepository,
    { pending, owners }: { pending: readonly PendingEdit[]; owners: ReadonlyMap<string, number> },
  ): Promise<{ repo: RepoState; deferred: ProjectCommit[] }> {
    let repo = start;
    const deferred: ProjectCommit[] = [];
    for (let i = 0; i < pending.length; i++) {
      const e = pending[i]!;
      const files = e.files.filter((f) => owners.get(f.path) === i);
      if (files.length === 0) continue;
      const done = await this.#commitFiles(repo, j, { who: e, paths: files.map((f) => f.path), expect: files });
      if (done === null) continue;
      repo = { ...repo, head: done.commit };
      deferred.push(
        Object.freeze({
          commit: done.commit,
          branch: done.branch,
          sessionId: e.sessionId,
          turn: e.turn,
          paths: done.entries.map((f) => f.path),
        }),
      );
      await this.#pending.write(j, pending.slice(i + 1));
    }
    if (pending.length > 0) await this.#pending.write(j, []);
    return { repo, deferred };
  }
}
