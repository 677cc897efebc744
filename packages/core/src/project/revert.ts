// The undo of an agent turn (docs/project-git.md, "Undo"), run by every engine through the seam:
// find the agent commit, read what the decision needs, decide (decision.ts), then have the engine
// move the branch and restore exactly the commit's paths. Under the project's lock, like a turn.
import { EntityGitError, isEntityGitError, isOid, type Identity } from '@entity-git/git';
import { assertId } from '../model/names.js';
import { committerName, resetReflogMessage, revertCommitMessage, revertedCommit } from './commit-message.js';
import { decideRevert, lockKey, repoRefusal, type RevertRefusal } from './decision.js';
import { requireWorkdir } from './input.js';
import type { Journal } from './journal.js';
import { within } from './paths.js';
import type { ProjectLock } from './project-coordination.js';
import type { ProjectGitEngine, RepoState, UndoRequest, WorkdirState } from './project-git-engine.js';
import type { RecoveredCommit } from './project-git-types.js';
import { agentCommitFinder, type FoundAgentCommit } from './revert-find.js';
import type { AgentCommitsInput, AgentCommitsResult, RevertInput, RevertResult } from './revert-types.js';

/** Upper bound on attempts when the branch or a file moves between the decision and the undo. */
const ATTEMPTS = 4;

export interface RevertDeps {
  engine: ProjectGitEngine;
  product: string;
  email: string;
  author: Identity | null;
  now: () => number;
  lock: ProjectLock;
  openJournal(root: string): Promise<Journal>;
  finishInFlight(repo: RepoState, j: Journal): Promise<RecoveredCommit[]>;
}

class Retry extends Error {}

const refused = (r: RevertRefusal, data: Record<string, unknown> = {}): never => {
  throw new EntityGitError(r.code, r.message, { reason: r.reason, paths: [...r.paths], ...data });
};

/** A state of the workdir in which there is no repository to undo anything in. */
function workdirRefusal(state: WorkdirState, workdir: string): never {
  const reasons = {
    missing: ['workdir-missing', `the project directory ${workdir} does not exist`],
    'not-a-directory': ['workdir-not-a-directory', `the project path ${workdir} is not a directory`],
    'not-a-repository': [
      'not-a-repository',
      `${workdir} is in no git repository: the agent has committed nothing there`,
    ],
    bare: ['bare-repository', `${workdir} is a bare repository (or inside a git directory): there is no working tree`],
  } as const;
  const [reason, message] = reasons[state.kind as keyof typeof reasons];
  throw new EntityGitError('REVERT_REFUSED', message, { reason, paths: [], workdir });
}

function validInput(input: RevertInput): {
  workdir: string;
  sessionId: string;
  turn: number | null;
  commit: string | null;
} {
  if (typeof input !== 'object' || input === null)
    throw new EntityGitError('INVALID_OPTION', 'revertAgentTurn needs an input object');
  const workdir = requireWorkdir(input.workdir);
  assertId(input.sessionId, 'sessionId');
  const turn = input.turn ?? null;
  const commit = input.commit ?? null;
  if (turn !== null && (!Number.isSafeInteger(turn) || turn < 1))
    throw new EntityGitError('INVALID_OPTION', `turn must be a positive integer: ${String(turn)}`);
  if (commit !== null && !isOid(commit))
    throw new EntityGitError('INVALID_OPTION', `commit must be 40 lowercase hex digits: ${JSON.stringify(commit)}`);
  if (turn === null && commit === null)
    throw new EntityGitError('INVALID_OPTION', 'revertAgentTurn needs a turn or a commit');
  return { workdir, sessionId: input.sessionId, turn, commit };
}

const short = (sha: string) => sha.slice(0, 12);
const files = (n: number) => (n === 1 ? '1 file' : `${n} files`);

export function agentTurnReverts(deps: RevertDeps) {
  const { engine, product, email, author, now, lock } = deps;
  const finder = agentCommitFinder(engine, product);

  async function attempt(want: ReturnType<typeof validInput>): Promise<RevertResult> {
    const first = await engine.inspect(want.workdir);
    if (first.kind !== 'repository') workdirRefusal(first, want.workdir);
    const key = lockKey(first, want.workdir);
    return lock(key, async () => {
      const state = await engine.inspect(want.workdir);
      if (lockKey(state, want.workdir) !== key) throw new Retry();
      if (state.kind !== 'repository') return workdirRefusal(state, want.workdir);
      const repo = state.repo;
      const before = repoRefusal(repo, engine.name);
      if (before !== null) return refused(before);
      // An earlier agent commit (or undo) whose process died after its branch moved gets its index entries first.
      const j = await deps.openJournal(repo.root);
      await deps.finishInFlight(repo, j);
      if (repo.head === null)
        throw new EntityGitError('AGENT_COMMIT_NOT_FOUND', 'the branch has no commit yet', { branch: repo.branch });
      const { found, above, resetBy } = await finder.locate(repo, want);
      const base = {
        sessionId: want.sessionId,
        turn: found.facts.turn,
        commit: found.record.id,
        branch: repo.branch!,
      };
      if (resetBy)
        return Object.freeze({
          ...base,
          kind: 'already-reverted' as const,
          by: 'reset' as const,
          revertCommit: null,
          paths: [],
          message: `The agent's edits of turn ${base.turn} were already undone: ${short(base.commit)} is no longer on the branch (an undo moved it back).`,
        });
      return undo(repo, j, found, above, base);
    });
  }

  async function undo(
    repo: RepoState,
    j: Journal,
    found: FoundAgentCommit,
    above: readonly { id: string; message: string }[],
    base: { sessionId: string; turn: number; commit: string; branch: string },
  ): Promise<RevertResult> {
    const agent = found.record;
    const parent = agent.parents[0] ?? null;
    const head = repo.head!;
    const paths = await engine.changedPaths(repo, parent, agent.id);
    const [parentE, agentE, headE, worktree, changes] = await Promise.all([
      engine.treeEntries(repo, parent, paths),
      engine.treeEntries(repo, agent.id, paths),
      engine.treeEntries(repo, head, paths),
      engine.hashPaths(repo, paths),
      engine.status(repo),
    ]);
    const decision = decideRevert({
      head,
      agent: agent.id,
      parent,
      revertedBy: above.find((c) => revertedCommit(c.message) === agent.id)?.id ?? null,
      onRemote: head === agent.id && parent !== null ? await engine.remoteRefsContaining(repo, agent.id) : [],
      paths: paths.map((path, i) => ({
        path,
        parent: parentE[i]!,
        agent: agentE[i]!,
        head: headE[i]!,
        worktree: worktree[i]!,
        dirty: changes.some((c) => within(c.path, path) || within(path, c.path)),
      })),
      clean: changes.length === 0,
    });
    if (decision.kind === 'refused') return refused(decision, { commit: agent.id });
    if (decision.kind === 'already-reverted')
      return Object.freeze({
        ...base,
        kind: 'already-reverted' as const,
        by: decision.by,
        revertCommit: decision.revertCommit,
        paths: [],
        message:
          decision.by === 'revert'
            ? `The agent's edits of turn ${base.turn} were already undone by ${short(decision.revertCommit!)}.`
            : `The agent's edits of turn ${base.turn} were already undone: the branch holds what was there before them.`,
      });

    const subject = agent.message.split('\n', 1)[0]!;
    const committer = { name: committerName(agent.committer), email, time: Math.floor(now() / 1000) };
    const who = { name: committer.name, email: committer.email };
    const restored = decision.entries.map((e) => e.path);
    const request: UndoRequest = {
      entries: decision.entries,
      expect: decision.expect,
      to:
        decision.kind === 'reset'
          ? { kind: 'reset', commit: parent! }
          : {
              kind: 'commit',
              message: revertCommitMessage(found.facts, agent.id),
              author: { ...(author ?? who), time: committer.time },
              committer,
            },
      who,
      reflogMessage:
        decision.kind === 'reset'
          ? resetReflogMessage(subject)
          : `commit: [agent ${found.facts.session}] revert turn ${found.facts.turn}${found.facts.subject === '' ? '' : `: ${found.facts.subject}`}`,
      // As for an agent commit: recorded before the branch moves, so a process that dies before the index holds it is finished by the next call.
      beforeBranchMoves: async (commit) => {
        await j.write([
          ...j.all,
          {
            sessionId: base.sessionId,
            turn: base.turn,
            subject: found.facts.subject,
            model: '',
            sessionCommit: found.facts.sessionCommit,
            at: now(),
            files: [],
            inFlight: { commit, parent: head, branch: repo.branch!, paths: restored },
          },
        ]);
      },
    };
    const done = await engine.undo(repo, request);
    if (j.all.some((e) => e.inFlight?.commit === done.commit))
      await j.write(j.all.filter((e) => e.inFlight?.commit !== done.commit));
    const branch = base.branch.replace(/^refs\/heads\//, '');
    if (decision.kind === 'reset')
      return Object.freeze({
        ...base,
        kind: 'reset' as const,
        head: done.commit,
        paths: restored,
        message: `Undone: ${branch} moved back over the agent's commit ${short(agent.id)} (turn ${base.turn}); ${files(restored.length)} restored.`,
      });
    return Object.freeze({
      ...base,
      kind: 'reverted' as const,
      head: done.commit,
      revertCommit: done.commit,
      paths: restored,
      message: `Undone: the new commit ${short(done.commit)} on ${branch} takes back the agent's commit ${short(agent.id)} (turn ${base.turn}); ${files(restored.length)} restored.`,
    });
  }

  /**
   * Take back what the agent committed for a turn. Resolves how (`reset`, `reverted`) or that it
   * was done before (`already-reverted`); a refusal throws, with nothing touched: `NOT_AGENT_COMMIT`,
   * `AGENT_COMMIT_NOT_FOUND`, `COMMIT_NOT_FOUND`, `REVERT_CONFLICT`, `REVERT_REFUSED` (`data.reason`).
   */
  async function revertAgentTurn(input: RevertInput): Promise<RevertResult> {
    const want = validInput(input);
    for (let n = 1; ; n++) {
      try {
        return await attempt(want);
      } catch (err) {
        // Someone's git holds `index.lock` or the branch's lock: the engines write nothing then.
        if (isEntityGitError(err, 'REF_LOCKED') && err.data.committed !== true) {
          const what = typeof err.data.lock === 'string' ? err.data.lock : 'a lock file';
          throw new EntityGitError(
            'REVERT_REFUSED',
            `another git is using the repository (${what} exists): nothing was undone`,
            { reason: 'repository-locked', paths: [], lock: err.data.lock ?? null },
            { cause: err },
          );
        }
        const moved =
          err instanceof Retry || isEntityGitError(err, 'REF_CONFLICT') || isEntityGitError(err, 'WORKTREE_CHANGED');
        if (!moved) throw err;
        if (n >= ATTEMPTS) {
          if (err instanceof Retry)
            throw new EntityGitError(
              'PROJECT_GIT_ERROR',
              `[${engine.name}] ${want.workdir} kept changing during the undo`,
              {
                workdir: want.workdir,
              },
            );
          throw err;
        }
      }
    }
  }

  /** The session's agent commits in the project (read-only): on the current branch, then those an undo moved it back over. */
  async function agentCommits(input: AgentCommitsInput): Promise<AgentCommitsResult> {
    if (typeof input !== 'object' || input === null)
      throw new EntityGitError('INVALID_OPTION', 'agentCommits needs an input object');
    const workdir = requireWorkdir(input.workdir);
    assertId(input.sessionId, 'sessionId');
    const limit = input.limit ?? 100;
    if (!Number.isSafeInteger(limit) || limit < 1)
      throw new EntityGitError('INVALID_OPTION', `limit must be a positive integer: ${String(limit)}`);
    const state = await engine.inspect(workdir);
    if (state.kind !== 'repository' || state.repo.branch === null || state.repo.unsupported !== null)
      return Object.freeze({ branch: state.kind === 'repository' ? state.repo.branch : null, commits: [] });
    return Object.freeze({
      branch: state.repo.branch,
      commits: Object.freeze(await finder.list(state.repo, input.sessionId, limit)),
    });
  }

  return { revertAgentTurn, agentCommits };
}
