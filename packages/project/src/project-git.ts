import { afterTurn } from './after-turn.js';
import { beforeTurn } from './before-turn.js';
import { projectGitContext } from './project-git-context.js';
import { observeAfterTurn, observeRevert } from './project-observe.js';
import type { AfterTurnInput, ProjectGit } from '@entity-git/core';
import type { ProjectGitOptions } from './project-git-types.js';
import { agentTurnReverts } from './revert.js';

export { UNCOMMITTED_CHANGES_WARNING, type ProjectGitOptions } from './project-git-types.js';
export { projectCommitMessage, revertCommitMessage, parseAgentCommit } from './commit-message.js';
export { memoryJournal } from './journal.js';
export { memoryLedger, type AgentCommitLedger, type AgentCommitEntry } from './agent-ledger.js';

/**
 * The project auto-commit logic (see docs/design.md, 'Safety rules': the user's project repository
 * is sacred), the one implementation; an engine supplies git.
 * See `docs/project-git.md` for the rules and the decisions behind them.
 */
export function createProjectGit(options: ProjectGitOptions): ProjectGit {
  const ctx = projectGitContext(options);
  const { engine, product, email, author, now, lock, openJournal, finishInFlight, ledger } = ctx;
  const reverts = agentTurnReverts({ engine, product, email, author, now, lock, openJournal, finishInFlight, ledger });
  return Object.freeze({
    engine: engine.name,
    beforeTurn: (workdir: string) => beforeTurn(ctx, workdir),
    inspect: (workdir: string) => beforeTurn(ctx, workdir),
    afterTurn: observeAfterTurn(options.logger, (input: AfterTurnInput) => afterTurn(ctx, input)),
    revertAgentTurn: observeRevert(options.logger, reverts.revertAgentTurn),
    agentCommits: reverts.agentCommits,
  });
}
