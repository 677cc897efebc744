// entity-git's own record of the agent commits it made: the proof an undo asks for. A commit's
// text (the committer name, the subject, the Session and Turn trailers) is something anyone with
// the user's git can write, so it only says which turn a commit claims to be; the undo acts on it
// only when this record names that commit for that session and turn.

/** One agent commit entity-git made: written before the branch moves (a crash after it leaves a record of a commit that may not have landed, which finds nothing). */
export interface AgentCommitEntry {
  readonly sessionId: string;
  readonly turn: number;
  readonly commit: string;
}

/**
 * Where the record lives, per repository root: somewhere the project's git cannot write (Node:
 * a file in the private state directory beside the locks, `workdirLedger`). Default: process
 * memory (one process, or tests).
 */
export interface AgentCommitLedger {
  /** Remember that entity-git is making `entry.commit` for that session and turn in `root`'s repository. */
  add(root: string, entry: AgentCommitEntry): Promise<void>;
  /** Every commit recorded for `sessionId` in `root`'s repository, as `<turn>:<commit>`. */
  commits(root: string, sessionId: string): Promise<ReadonlySet<string>>;
}

/** The key an entry is looked up by. */
export const ledgerKey = (turn: number, commit: string): string => `${turn}:${commit}`;

/** A ledger in process memory. */
export function memoryLedger(): AgentCommitLedger {
  const byRoot = new Map<string, AgentCommitEntry[]>();
  return {
    async add(root, entry) {
      byRoot.set(root, [...(byRoot.get(root) ?? []), entry]);
    },
    async commits(root, sessionId) {
      return new Set(
        (byRoot.get(root) ?? []).filter((e) => e.sessionId === sessionId).map((e) => ledgerKey(e.turn, e.commit)),
      );
    },
  };
}
