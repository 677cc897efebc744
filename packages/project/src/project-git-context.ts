import { agentCommits } from './agent-commit.js';
import { memoryLedger, type AgentCommitLedger } from './agent-ledger.js';
import { checkOptions } from './input.js';
import { memoryJournal, pendingEdits } from './journal.js';
import type { ProjectLock } from './project-coordination.js';
import type { ProjectGitEngine } from './project-git-engine.js';
import type { ProjectGitOptions } from './project-git-types.js';
import { serialized } from './project-mutex.js';
import { inFlightRecovery } from './recovery.js';

const DAY = 86_400_000;

/** What every step of a project's turn reads: the checked options and the shared mechanisms built once from them. */
export type ProjectGitContext = Readonly<
  ReturnType<typeof pendingEdits> & {
    engine: ProjectGitEngine;
    product: string;
    email: string;
    author: ReturnType<typeof checkOptions>['author'];
    withoutSnapshot: NonNullable<ProjectGitOptions['withoutSnapshot']>;
    now: () => number;
    lock: ProjectLock;
    initOptions: { readonly initialBranch?: string };
    finishInFlight: ReturnType<typeof inFlightRecovery>;
    commitFiles: ReturnType<typeof agentCommits>;
    ledger: AgentCommitLedger;
  }
>;

/** The options checked (`INVALID_OPTION` for a bad one) and made into the context, frozen. */
export function projectGitContext(options: ProjectGitOptions): ProjectGitContext {
  const { engine, product, email, author, withoutSnapshot } = checkOptions(options);
  const ttl = options.pendingTtlMs ?? 7 * DAY;
  const now = options.now ?? Date.now;
  const journal = options.journal ?? memoryJournal();
  const ledger = options.ledger ?? memoryLedger();
  return Object.freeze({
    engine,
    product,
    email,
    author,
    withoutSnapshot,
    now,
    lock: serialized(options.lock),
    initOptions: options.initialBranch === undefined ? {} : { initialBranch: options.initialBranch },
    ...pendingEdits(engine, journal, now, ttl),
    finishInFlight: inFlightRecovery(engine),
    commitFiles: agentCommits({ engine, product, email, author, now, ledger }),
    ledger,
  });
}
