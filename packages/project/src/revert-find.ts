// Finding a session's agent commits in a project repository for the undo: down the current
// branch's first-parent history (the line the auto-commit advances), and in the branch's reflog
// for those an undo moved the branch back over. Read-only.
import { EntityGitError } from '@entity-git/git';
import { encodeId } from '@entity-git/core';
import { RESET_REFLOG_PREFIX, parseAgentCommit, revertedCommit, type AgentCommitFacts } from './commit-message.js';
import type { CommitRecord, ProjectGitEngine, RepoState } from './project-git-engine.js';
import type { AgentTurnCommit } from '@entity-git/core';
import { ledgerKey, type AgentCommitLedger } from './agent-ledger.js';

/** How far down the branch the undo looks for an agent commit, in commits. */
export const HISTORY_DEPTH = 10_000;
/** History is read in pages that grow from this size: a recent turn is found after one short read. */
const FIRST_PAGE = 64;
/** Undo entries of a reflog looked at, newest first. */
const REFLOG_UNDOS = 50;

/** An agent commit found, with what its message says. */
export interface FoundAgentCommit {
  readonly record: CommitRecord;
  readonly facts: AgentCommitFacts;
}

/** What an undo names: the session, and the turn or the commit (or both). */
export interface AgentCommitWanted {
  sessionId: string;
  turn: number | null;
  commit: string | null;
}

/**
 * Locating one agent commit for an undo, and listing a session's. A commit counts as the agent's
 * only when its message says so (session and turn) and entity-git's ledger names it for that
 * session and turn: the message alone anyone can write.
 */
export class AgentCommitFinder {
  readonly #engine: ProjectGitEngine;
  /** The product name agent commits are recognised by. */
  readonly #product: string;
  /** entity-git's record of its agent commits. */
  readonly #ledger: AgentCommitLedger;

  constructor(engine: ProjectGitEngine, product: string, ledger: AgentCommitLedger) {
    this.#engine = engine;
    this.#product = product;
    this.#ledger = ledger;
  }

  #factsOf(c: CommitRecord): AgentCommitFacts | null {
    return parseAgentCommit(c.message, c.committer, this.#product);
  }

  /** The branch's first-parent history from HEAD, page by page, until `visit` says stop (true) or {@link HISTORY_DEPTH} is reached. */
  async #walk(repo: RepoState, visit: (c: CommitRecord) => boolean): Promise<void> {
    if (repo.head === null) return;
    let from: string | undefined = repo.head;
    let seen = 0;
    for (let size = FIRST_PAGE; from !== undefined && seen < HISTORY_DEPTH; size = Math.min(size * 4, 4096)) {
      const page = await this.#engine.history(repo, from, Math.min(size, HISTORY_DEPTH - seen));
      for (const c of page) if (visit(c)) return;
      seen += page.length;
      from = page.length < size ? undefined : page.at(-1)!.parents[0];
    }
  }

  /** One commit, or null when the repository has none of that id. */
  async #commitOf(repo: RepoState, id: string): Promise<CommitRecord | null> {
    return (await this.#engine.history(repo, id, 1))[0] ?? null;
  }

  /** The agent commits of `sessionId` an undo moved `repo.branch` back over, newest first (from the branch's reflog). */
  async #undoneByReset(repo: RepoState, sessionId: string): Promise<FoundAgentCommit[]> {
    const session = encodeId(sessionId);
    const recorded = await this.#ledger.commits(repo.root, sessionId);
    const entries = (await this.#engine.reflog(repo, repo.branch!)).filter((e) =>
      e.message.startsWith(RESET_REFLOG_PREFIX),
    );
    const out: FoundAgentCommit[] = [];
    for (const e of entries.slice(0, REFLOG_UNDOS)) {
      if (out.some((o) => o.record.id === e.old)) continue;
      const record = await this.#commitOf(repo, e.old);
      const facts = record === null ? null : this.#factsOf(record);
      if (
        record !== null &&
        facts !== null &&
        facts.session === session &&
        record.parents[0] === e.new &&
        recorded.has(ledgerKey(facts.turn, record.id))
      )
        out.push({ record, facts });
    }
    return out;
  }

  /**
   * The agent commit an undo is about, on the current branch: `commit` when named (it must be
   * `sessionId`'s agent commit, and of `turn` when given too: else `NOT_AGENT_COMMIT`), else the
   * newest agent commit of `turn`. With the commits above it on the branch (newer, first-parent).
   * When it is not on the branch: `resetBy` true if an undo moved the branch back over it, else
   * `AGENT_COMMIT_NOT_FOUND` (or `COMMIT_NOT_FOUND` for a commit the repository lacks).
   */
  async locate(
    repo: RepoState,
    want: AgentCommitWanted,
  ): Promise<{ found: FoundAgentCommit; above: CommitRecord[]; resetBy: boolean }> {
    const session = encodeId(want.sessionId);
    const recorded = await this.#ledger.commits(repo.root, want.sessionId);
    const claims = (x: AgentCommitFacts | null): x is AgentCommitFacts =>
      x !== null && x.session === session && (want.turn === null || x.turn === want.turn);
    let forged = false;
    const mine = (x: AgentCommitFacts | null, id: string): x is AgentCommitFacts => {
      if (!claims(x)) return false;
      if (recorded.has(ledgerKey(x.turn, id))) return true;
      forged = true;
      return false;
    };
    if (want.commit !== null) {
      const record = await this.#commitOf(repo, want.commit);
      if (record === null)
        throw new EntityGitError('COMMIT_NOT_FOUND', `the project repository has no commit ${want.commit}`, {
          commit: want.commit,
        });
      const facts = this.#factsOf(record);
      if (!mine(facts, record.id))
        throw new EntityGitError(
          'NOT_AGENT_COMMIT',
          `${want.commit.slice(0, 12)} is not an agent commit of session ${want.sessionId}${want.turn === null ? '' : ` for turn ${want.turn}`}${forged ? ' (its message says so, but entity-git has no record of making it)' : ''}: only the agent's own commits are undone`,
          { commit: want.commit, sessionId: want.sessionId, turn: want.turn, recorded: !forged && claims(facts) },
        );
    }
    const above: CommitRecord[] = [];
    let found: FoundAgentCommit | null = null;
    await this.#walk(repo, (c) => {
      const facts = want.commit === null || c.id === want.commit ? this.#factsOf(c) : null;
      if (mine(facts, c.id)) {
        found = { record: c, facts };
        return true;
      }
      above.push(c);
      return false;
    });
    if (found !== null) return { found, above, resetBy: false };
    const undone = (await this.#undoneByReset(repo, want.sessionId)).find((u) =>
      want.commit !== null ? u.record.id === want.commit : u.facts.turn === want.turn,
    );
    if (undone) return { found: undone, above: [], resetBy: true };
    if (forged)
      throw new EntityGitError(
        'NOT_AGENT_COMMIT',
        `turn ${want.turn} of session ${want.sessionId}: the commit whose message names it is not one entity-git recorded making: only the agent's own commits are undone`,
        { sessionId: want.sessionId, turn: want.turn, recorded: false },
      );
    const branch = repo.branch!.replace(/^refs\/heads\//, '');
    throw new EntityGitError(
      'AGENT_COMMIT_NOT_FOUND',
      want.commit !== null
        ? `the agent commit ${want.commit.slice(0, 12)} is not on ${branch}`
        : `turn ${want.turn} of session ${want.sessionId} made no agent commit on ${branch}`,
      { sessionId: want.sessionId, turn: want.turn, commit: want.commit, branch: repo.branch },
    );
  }

  /** The session's agent commits on the branch (newest first, at most `limit`), then those undone by a reset. */
  async list(repo: RepoState, sessionId: string, limit: number): Promise<AgentTurnCommit[]> {
    const session = encodeId(sessionId);
    const recorded = await this.#ledger.commits(repo.root, sessionId);
    const revertedBy = new Map<string, string>();
    const out: AgentTurnCommit[] = [];
    const entry = (a: FoundAgentCommit, undone: AgentTurnCommit['undone']): AgentTurnCommit =>
      Object.freeze({
        commit: a.record.id,
        turn: a.facts.turn,
        subject: a.facts.subject,
        sessionCommit: a.facts.sessionCommit,
        undone,
      });
    await this.#walk(repo, (c) => {
      const reverted = revertedCommit(c.message);
      if (reverted !== null && !revertedBy.has(reverted)) revertedBy.set(reverted, c.id);
      const facts = this.#factsOf(c);
      if (facts !== null && facts.session === session && recorded.has(ledgerKey(facts.turn, c.id))) {
        const by = revertedBy.get(c.id);
        out.push(entry({ record: c, facts }, by === undefined ? null : { by: 'revert', revertCommit: by }));
      }
      return out.length >= limit;
    });
    for (const u of await this.#undoneByReset(repo, sessionId)) {
      if (out.length >= limit) break;
      if (!out.some((e) => e.commit === u.record.id)) out.push(entry(u, { by: 'reset' }));
    }
    return out;
  }
}
