import type { Identity } from '@entity-git/git';
import { agentName, projectCommitMessage } from './commit-message.js';
import type { AgentCommitLedger } from './agent-ledger.js';
import type { Journal } from './journal.js';
import type { PendingEdit } from './project-coordination.js';
import type { CommitDone, FileState, ProjectGitEngine, RepoState } from './project-git-engine.js';

/** What one agent commit lands: whose turn it was, its paths, and the blobs they must still hold (else `WORKTREE_CHANGED`). */
export interface AgentChange {
  who: { sessionId: string; turn: number; subject: string; model: string; sessionCommit: string | null; at: number };
  paths: string[];
  expect?: FileState[];
}

/**
 * An agent commit of `paths` through the engine: committer, author and message made here, the
 * commit recorded in the journal as in flight before its branch moves and forgotten once the
 * index holds it.
 */
export function agentCommits(deps: {
  engine: ProjectGitEngine;
  product: string;
  email: string;
  author: Identity | null;
  now: () => number;
  ledger: AgentCommitLedger;
}) {
  const { engine, product, email, author, now, ledger } = deps;
  async function commitFiles(repo: RepoState, j: Journal, change: AgentChange): Promise<CommitDone | null> {
    const { who, paths, expect } = change;
    const committer = { name: agentName(who.model, product), email, time: Math.floor(now() / 1000) };
    const authorSig = { ...(author ?? committer), time: Math.floor(who.at / 1000) };
    const message = projectCommitMessage(who.sessionId, who.turn, who.subject, who.sessionCommit);
    // The commit is recorded in the journal before the branch moves and forgotten once the index
    // holds it: a record left behind means the process died in between (see finishInFlight).
    const sorted = [...paths].sort();
    const beforeBranchMoves = async (commit: string): Promise<void> => {
      // entity-git's own record, the undo's proof: before the branch moves, so no crash loses it.
      await ledger.add(repo.root, { sessionId: who.sessionId, turn: who.turn, commit });
      const record: PendingEdit = {
        sessionId: who.sessionId,
        turn: who.turn,
        subject: who.subject,
        model: who.model,
        sessionCommit: who.sessionCommit,
        at: who.at,
        files: [],
        inFlight: { commit, parent: repo.head, branch: repo.branch!, paths: sorted },
      };
      await j.write([...j.all, record]);
    };
    const request = {
      paths: sorted,
      message,
      author: authorSig,
      committer,
      reflogMessage: `commit: ${message.slice(0, message.indexOf('\n'))}`,
      beforeBranchMoves,
    };
    const done = await engine.commit(repo, expect ? { ...request, expect } : request);
    if (done !== null && j.all.some((e) => e.inFlight?.commit === done.commit))
      await j.write(j.all.filter((e) => e.inFlight?.commit !== done.commit));
    return done;
  }

  return commitFiles;
}
