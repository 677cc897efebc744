import { EntityGitError, isEntityGitError } from '@entity-git/git';
import { observeAfterTurn, observeRevert } from './project-observe.js';
import type { FileState, WorkdirState } from './project-git-engine.js';
import { toRepoPath } from './paths.js';
import { OPERATION_NAMES, OPERATION_ORDER, classify, lockKey, ownersOf, skip, userBefore } from './decision.js';
import { checkOptions, requireWorkdir, validTurn, type Turn } from './input.js';
import { memoryJournal, pendingEdits } from './journal.js';
import { serialized } from './project-mutex.js';
import { inFlightRecovery } from './recovery.js';
import { agentCommits } from './agent-commit.js';
import { agentTurnReverts } from './revert.js';
import {
  UNCOMMITTED_CHANGES_WARNING,
  type AfterTurnInput,
  type AfterTurnResult,
  type ProjectCommit,
  type ProjectGit,
  type ProjectGitOptions,
  type ProjectSnapshot,
  type RecoveredCommit,
} from './project-git-types.js';

export {
  UNCOMMITTED_CHANGES_WARNING,
  type AfterTurnInput,
  type AfterTurnResult,
  type CommittedResult,
  type NothingToCommitResult,
  type ProjectCommit,
  type ProjectGit,
  type ProjectGitOptions,
  type ProjectSnapshot,
  type RecoveredCommit,
  type SkippedResult,
  type SkipReason,
} from './project-git-types.js';
export type {
  AgentCommitsInput,
  AgentCommitsResult,
  AgentTurnCommit,
  AlreadyRevertedResult,
  ResetResult,
  RevertedResult,
  RevertInput,
  RevertResult,
} from './revert-types.js';
export { projectCommitMessage, revertCommitMessage, parseAgentCommit } from './commit-message.js';
export { memoryJournal } from './journal.js';

/** Upper bound on attempts when the branch or a file moves between the decision and the commit. */
const ATTEMPTS = 4;
const DAY = 86_400_000;

class Retry extends Error {}

/**
 * The project auto-commit logic (DESIGN.md §4), the one implementation; an engine supplies git.
 * See `docs/project-git.md` for the rules and the decisions behind them.
 */
export function createProjectGit(options: ProjectGitOptions): ProjectGit {
  const { engine, product, email, author, withoutSnapshot } = checkOptions(options);
  const ttl = options.pendingTtlMs ?? 7 * DAY;
  const now = options.now ?? Date.now;
  const lock = serialized(options.lock);
  const journal = options.journal ?? memoryJournal();
  const initOptions = options.initialBranch === undefined ? {} : { initialBranch: options.initialBranch };

  const { openJournal, freshPending, writePending, currentOfPending } = pendingEdits(engine, journal, now, ttl);
  const finishInFlight = inFlightRecovery(engine);
  const commitFiles = agentCommits(engine, product, email, author, now);
  const reverts = agentTurnReverts({ engine, product, email, author, now, lock, openJournal, finishInFlight });

  async function beforeTurn(workdirInput: string): Promise<ProjectSnapshot> {
    const workdir = requireWorkdir(workdirInput);
    const snapshot = (
      state: WorkdirState['kind'],
      root: string | null,
      head: string | null,
      dirty: string[],
      agentDirty: string[] = [],
    ): ProjectSnapshot =>
      Object.freeze({
        version: 1 as const,
        workdir,
        root,
        state,
        head,
        takenAt: now(),
        dirty: Object.freeze(dirty),
        agentDirty: Object.freeze(agentDirty),
      });
    const first = await engine.inspect(workdir);
    if (first.kind === 'missing' || first.kind === 'not-a-directory') return snapshot(first.kind, null, null, []);
    return lock(lockKey(first, workdir), async () => {
      const state = await engine.inspect(workdir);
      if (state.kind === 'not-a-repository') return snapshot(state.kind, null, null, [...state.entries].sort());
      if (state.kind !== 'repository') return snapshot(state.kind, null, null, []);
      const { repo } = state;
      if (repo.unsupported !== null) return snapshot(state.kind, repo.root, repo.head, []);
      // The one write beforeTurn may make: finishing an interrupted agent commit, so its paths are not taken for the user's.
      // A lock file someone's git holds (or a killed one left) stops only that: the record waits for afterTurn, the snapshot is taken as things are (the agent's paths then count as the user's: the safe side).
      const j = await openJournal(repo.root);
      const recovered = await finishInFlight(repo, j).catch((err: unknown) => {
        if (isEntityGitError(err, 'REF_LOCKED')) return [];
        throw err;
      });
      const dirty = (await engine.status(repo)).map((c) => c.path);
      const pending = freshPending(j);
      const owners = ownersOf(pending, await currentOfPending(repo, dirty, pending));
      const taken = snapshot(
        state.kind,
        repo.root,
        repo.head,
        dirty.filter((p) => !owners.has(p)),
        dirty.filter((p) => owners.has(p)),
      );
      return recovered.length === 0 ? taken : Object.freeze({ ...taken, recovered: Object.freeze(recovered) });
    });
  }

  async function attempt(
    t: Turn,
    recovered: RecoveredCommit[],
    seen: { mine: readonly string[]; ignored: readonly string[] },
  ): Promise<AfterTurnResult> {
    const first = await engine.inspect(t.workdir);
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
    return lock(key, async () => {
      let state = await engine.inspect(t.workdir);
      if (lockKey(state, t.workdir) !== key) throw new Retry();
      if (state.kind === 'missing' || state.kind === 'not-a-directory') throw new Retry();
      if (state.kind === 'not-a-repository') {
        const inside = t.touched
          .map((p) => toRepoPath(p, t.workdir, t.workdir, ''))
          .filter((p): p is string => p !== null);
        // No edit, no repository: a project directory becomes one on the agent's first commit.
        if (inside.length === 0)
          return Object.freeze({
            status: 'skipped' as const,
            reason: 'nothing-to-commit' as const,
            warning: null,
            deferred: [],
            ignoredPaths: [...t.touched],
          });
        await engine.init(t.workdir, initOptions);
        state = await engine.inspect(t.workdir);
        if (state.kind !== 'repository')
          throw new EntityGitError(
            'PROJECT_GIT_ERROR',
            `[${engine.name}] ${t.workdir} is still no repository after init`,
            { workdir: t.workdir, state: state.kind },
          );
      }
      if (state.kind === 'bare')
        return skip(
          'bare-repository',
          `the project directory is a bare repository (or inside a git directory): there is no working tree to commit, the agent's edits won't be auto-committed`,
        );
      let repo = state.repo;
      if (repo.unsupported !== null)
        return skip(
          'unsupported-repository',
          `${engine.name} cannot commit safely into this repository (${repo.unsupported}), the agent's edits won't be auto-committed`,
        );
      // Before anything is looked at: an earlier agent commit whose process died after its branch moved gets its index entries.
      const j = await openJournal(repo.root);
      recovered.push(...(await finishInFlight(repo, j)));
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

      const ignoredPaths: string[] = [];
      const touched = new Set<string>();
      for (const p of t.touched) {
        const r = toRepoPath(p, t.workdir, repo.root, repo.prefix);
        if (r === null) ignoredPaths.push(p);
        else touched.add(r);
      }
      const changes = await engine.status(repo);
      const before = userBefore(t, repo);
      // A path an interrupted commit's recovery left staged is the user's staging, whatever the snapshot says.
      const staged = new Set(recovered.flatMap((r) => r.userPaths));
      const { mine, others, inSubmodules } = classify(changes, touched, before, staged);
      seen.mine = mine;
      seen.ignored = ignoredPaths;
      // The bytes the tools reported: a file of the agent's that holds others now was edited
      // during the turn by someone else (the user), and is theirs.
      const editedDuring: string[] = [];
      let expectMine: FileState[] | undefined;
      /** `mine` hashed, when the check below did it. */
      let hashedMine: FileState[] | null = null;
      if (t.written.length > 0 && mine.length > 0) {
        const reported = new Map<string, string | null>();
        for (const [p, oid] of t.written) {
          const r = toRepoPath(p, t.workdir, repo.root, repo.prefix);
          if (r !== null) reported.set(r, oid);
        }
        expectMine = [];
        hashedMine = await engine.hashPaths(repo, mine);
        for (const f of hashedMine) {
          if (!reported.has(f.path)) continue;
          if (f.oid === reported.get(f.path)) expectMine.push(f);
          else editedDuring.push(f.path);
        }
        if (editedDuring.length > 0) mine.splice(0, mine.length, ...mine.filter((p) => !editedDuring.includes(p)));
      }
      if (inSubmodules.length > 0) {
        return skip(
          'submodule-changes',
          `the agent edited files inside the submodule ${inSubmodules.join(', ')}, its edits won't be auto-committed`,
          { agentPaths: mine, ignoredPaths },
        );
      }

      // A change the agent did not make this turn is still an agent's if it holds the exact bytes
      // of a pending edit (another session whose turn ended first, or an earlier blocked turn).
      const pending = freshPending(j);
      const current = await currentOfPending(
        repo,
        others.filter((c) => !c.conflicted && !c.submodule).map((c) => c.path),
        pending,
      );
      const owners = ownersOf(pending, current);
      const userPaths = [
        ...others.filter((c) => c.conflicted || c.submodule || !owners.has(c.path)).map((c) => c.path),
        ...editedDuring,
      ].sort();

      if (userPaths.length > 0) {
        if (mine.length > 0 && (before !== null || withoutSnapshot === 'trust-touched')) {
          const files = hashedMine?.filter((f) => mine.includes(f.path)) ?? (await engine.hashPaths(repo, mine));
          const kept = pending
            .map((e) => ({ ...e, files: e.files.filter((f) => !mine.includes(f.path)) }))
            .filter((e) => e.files.length > 0);
          await writePending(j, [
            ...kept,
            {
              sessionId: t.sessionId,
              turn: t.turn,
              subject: t.subject,
              model: t.model,
              sessionCommit: t.sessionCommit,
              at: now(),
              files,
            },
          ]);
        }
        return skip('uncommitted-changes', UNCOMMITTED_CHANGES_WARNING, { userPaths, agentPaths: mine, ignoredPaths });
      }
      if (mine.length > 0 && before === null && withoutSnapshot === 'skip') {
        return skip(
          'no-snapshot',
          `no snapshot of the working tree was taken before the turn, the agent's edits won't be auto-committed`,
          { agentPaths: mine, ignoredPaths },
        );
      }

      // Nothing of the user's is uncommitted: land the pending edits, oldest first, then this turn's.
      const deferred: ProjectCommit[] = [];
      for (let i = 0; i < pending.length; i++) {
        const e = pending[i]!;
        const files = e.files.filter((f) => owners.get(f.path) === i);
        if (files.length === 0) continue;
        const done = await commitFiles(
          repo,
          j,
          e,
          files.map((f) => f.path),
          files,
        );
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
        await writePending(j, pending.slice(i + 1));
      }
      if (pending.length > 0) await writePending(j, []);

      const done = mine.length === 0 ? null : await commitFiles(repo, j, { ...t, at: now() }, mine, expectMine);
      if (done === null)
        return Object.freeze({
          status: 'skipped' as const,
          reason: 'nothing-to-commit' as const,
          warning: null,
          deferred,
          ignoredPaths,
        });
      return Object.freeze({
        status: 'committed' as const,
        commit: done.commit,
        branch: done.branch,
        sessionId: t.sessionId,
        turn: t.turn,
        paths: done.entries.map((f) => f.path),
        deferred,
        ignoredPaths,
      });
    });
  }

  async function afterTurn(input: AfterTurnInput): Promise<AfterTurnResult> {
    const t = validTurn(input);
    const recovered: RecoveredCommit[] = [];
    for (let n = 1; ; n++) {
      const seen: { mine: readonly string[]; ignored: readonly string[] } = { mine: [], ignored: [] };
      try {
        const result = await attempt(t, recovered, seen);
        return recovered.length === 0 ? result : Object.freeze({ ...result, recovered: Object.freeze([...recovered]) });
      } catch (err) {
        // Someone's git holds `index.lock` or the branch's lock (an amend whose editor is open, or a
        // lock a killed git left): the engines move nothing then, so this is a skip, not a failure.
        if (isEntityGitError(err, 'REF_LOCKED') && err.data.committed !== true) {
          const what = typeof err.data.lock === 'string' ? err.data.lock : 'a lock file';
          const result = skip(
            'repository-locked',
            `another git is using the repository (${what} exists), the agent's edits won't be auto-committed for now`,
            { agentPaths: [...seen.mine], ignoredPaths: [...seen.ignored] },
          );
          return recovered.length === 0
            ? result
            : Object.freeze({ ...result, recovered: Object.freeze([...recovered]) });
        }
        // The branch, a file or the repository itself moved between looking and committing: look again.
        const moved =
          err instanceof Retry || isEntityGitError(err, 'REF_CONFLICT') || isEntityGitError(err, 'WORKTREE_CHANGED');
        if (!moved) throw err;
        if (n >= ATTEMPTS) {
          if (err instanceof Retry)
            throw new EntityGitError(
              'PROJECT_GIT_ERROR',
              `[${engine.name}] ${t.workdir} kept changing while the agent's commit was prepared`,
              { workdir: t.workdir },
            );
          throw err;
        }
      }
    }
  }

  return Object.freeze({
    engine: engine.name,
    beforeTurn,
    afterTurn: observeAfterTurn(options.logger, afterTurn),
    revertAgentTurn: observeRevert(options.logger, reverts.revertAgentTurn),
    agentCommits: reverts.agentCommits,
  });
}
