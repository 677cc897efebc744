// Taking back one agent commit the finder located: read what the decision needs, decide
// (decision.ts), then have the engine move the branch and restore exactly the commit's paths.
import { EntityGitError, type Identity } from '@entity-git/git';
import { committerName, resetReflogMessage, revertCommitMessage, revertedCommit } from './commit-message.js';
import { decideRevert, type RevertDecision, type RevertRefusal } from './decision.js';
import type { Journal } from './journal.js';
import { within } from './paths.js';
import type { ProjectGitEngine, RepoState, UndoRequest, WorkdirState } from './project-git-engine.js';
import type { FoundAgentCommit } from './revert-find.js';
import type { RevertResult } from '@entity-git/core';

/** What every undo result names: the session, the turn, the agent commit and the branch. */
export interface RevertBase {
  sessionId: string;
  turn: number;
  commit: string;
  branch: string;
}

/** The undo's agent commit as the finder located it, with the commits above it on the branch. */
export interface Located {
  found: FoundAgentCommit;
  above: readonly { id: string; message: string }[];
}

export const refused = (r: RevertRefusal, data: Record<string, unknown> = {}): never => {
  throw new EntityGitError(r.code, r.message, { reason: r.reason, paths: [...r.paths], ...data });
};

/** A state of the workdir in which there is no repository to undo anything in. */
export function workdirRefusal(state: WorkdirState, workdir: string): never {
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

export const short = (sha: string) => sha.slice(0, 12);
const files = (n: number) => (n === 1 ? '1 file' : `${n} files`);

/** Where an undo runs: the repository under the project's lock, its journal, and what every result reports. */
export interface UndoScope {
  repo: RepoState;
  j: Journal;
  base: RevertBase;
}

/** Taking back agent commits the finder located, with the committer an undo's own commit is made by. */
export class AgentUndo {
  readonly #engine: ProjectGitEngine;
  readonly #email: string;
  readonly #author: Identity | null;
  readonly #now: () => number;

  constructor(engine: ProjectGitEngine, committer: { email: string; author: Identity | null; now: () => number }) {
    this.#engine = engine;
    this.#email = committer.email;
    this.#author = committer.author;
    this.#now = committer.now;
  }

  /** Under the project's lock: take the agent commit back, or say it was already, or refuse (throws). */
  async undo(scope: UndoScope, { found, above }: Located): Promise<RevertResult> {
    const { repo, base } = scope;
    const agent = found.record;
    const decision = await this.#decide(repo, found, above);
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

    const restored = decision.entries.map((e) => e.path);
    const done = await this.#engine.undo(repo, this.#request(scope, found, decision));
    const { j } = scope;
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

  /** What the engine reports of the agent commit's paths (in its parent, in it, in HEAD, in the tree), decided on. */
  async #decide(repo: RepoState, found: FoundAgentCommit, above: Located['above']): Promise<RevertDecision> {
    const engine = this.#engine;
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
    return decideRevert({
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
  }

  /** The engine's request for a `reset` or `revert` decision: entries, the commit or the branch's new tip, and the journal record. */
  #request(
    { repo, j, base }: UndoScope,
    found: FoundAgentCommit,
    decision: Extract<RevertDecision, { kind: 'reset' | 'revert' }>,
  ): UndoRequest {
    const [email, author, now] = [this.#email, this.#author, this.#now];
    const agent = found.record;
    const parent = agent.parents[0] ?? null;
    const head = repo.head!;
    const subject = agent.message.split('\n', 1)[0]!;
    const committer = { name: committerName(agent.committer), email, time: Math.floor(now() / 1000) };
    const who = { name: committer.name, email: committer.email };
    const restored = decision.entries.map((e) => e.path);
    return {
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
  }
}
