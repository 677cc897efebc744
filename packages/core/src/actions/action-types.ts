import type { DagNode, JsonValue, ProjectStatus } from '../model/types.js';
import type { RestoreTurnFilesResult, TurnFileDiffResult, TurnFilesListResult } from './turn-files-actions.js';

export type { RestoreTurnFilesResult, TurnFileDiffResult, TurnFilesListResult } from './turn-files-actions.js';

/** One commit of a session's timeline. */
export interface TimelineCommit {
  sha: string;
  parents: string[];
  /** Turn number on its branch (from the trailers). */
  turn: number | null;
  subject: string;
  /** Seconds since the epoch. */
  time: number;
  /** The last node of the turn, and its seq. */
  node: string | null;
  seq: number | null;
}

export interface HistoryResult {
  session_id: string;
  branch: string | null;
  /** Newest first, one per turn. */
  commits: TimelineCommit[];
}

export interface CheckoutResult {
  session_id: string;
  commit: string;
  branch: string;
  /** "Turn N / M". */
  turn: number;
  turns: number;
  prev: string | null;
  next: string | null;
  messages: DagNode[];
  meta: JsonValue;
  /** The node a message sent from this view continues from (a new message forks here). */
  continue_from: string | null;
}

export interface BranchSummary {
  name: string;
  commit: string;
  turns: number;
  head: boolean;
}

export interface BranchesResult {
  session_id: string;
  branches: BranchSummary[];
}

export interface SwitchBranchResult extends BranchesResult {
  /** The DAG head now (the leaf of the branch). */
  head_node: string;
}

export interface ProjectSummary {
  id: string;
  name: string;
  workdir: string;
  status: ProjectStatus;
  description: string | null;
  created_at: number;
  sessions: string[];
  sessions_count: number;
}

export interface SessionSummary {
  id: string;
  title: string | null;
  model: string | null;
  project_id: string | null;
  created_at: number;
  /** The branch HEAD names in the session repository, and its turn count; null before the first sync. */
  branch: string | null;
  turns: number;
}

export interface ProjectDetail extends ProjectSummary {
  session_details: SessionSummary[];
}

/** What `revert_agent_turn` did (docs/project-git.md, "Undo"); a refusal is an error instead. */
export interface RevertAgentTurnResult {
  /** `reset`: the branch moved back over the agent's commit; `reverted`: a new commit takes it back; `already-reverted`: nothing to do. */
  kind: 'reset' | 'reverted' | 'already-reverted';
  project_id: string;
  workdir: string;
  session_id: string;
  turn: number;
  /** The agent's commit in the project's repository. */
  commit: string;
  /** The full ref (`refs/heads/main`). */
  branch: string;
  /** HEAD after a reset or a revert; null when nothing was done. */
  head: string | null;
  /** The revert commit: the one made (`reverted`) or found (`already-reverted` by a revert); else null. */
  revert_commit: string | null;
  /** For `already-reverted`: `reset`, `revert` or `content`; else null. */
  by: 'reset' | 'revert' | 'content' | null;
  /** Paths restored to what they were before the agent's commit. */
  paths: string[];
  /** One sentence for the UI. */
  message: string;
}

/** One agent commit of a session in its project. */
export interface AgentCommitSummary {
  commit: string;
  turn: number;
  subject: string;
  /** The session repository's commit of the turn, when the agent commit names it. */
  session_commit: string | null;
  /** Null while its edits stand; `reset` or `revert` once an undo took them back. */
  undone: 'reset' | 'revert' | null;
  revert_commit: string | null;
}

export interface AgentCommitsListResult {
  project_id: string;
  workdir: string;
  session_id: string;
  /** The branch HEAD names in the project; null when detached or no repository. */
  branch: string | null;
  /** Newest first: on the branch, then those an undo moved the branch back over. */
  commits: AgentCommitSummary[];
}

/** Every action with its parameters and result: the protocol of the WebSocket server and the app. */
export interface ActionMap {
  git_history: { params: { session_id: string; branch?: string }; result: HistoryResult };
  git_session_log: { params: { session_id: string; branch?: string }; result: HistoryResult };
  git_checkout: { params: { session_id: string; commit_sha: string; branch?: string }; result: CheckoutResult };
  git_session_checkout: { params: { session_id: string; commit_sha: string; branch?: string }; result: CheckoutResult };
  git_branches: { params: { session_id: string }; result: BranchesResult };
  git_switch_branch: { params: { session_id: string; branch: string }; result: SwitchBranchResult };
  list_sessions: { params: Record<string, never>; result: { sessions: SessionSummary[] } };
  list_projects: { params: Record<string, never>; result: { projects: ProjectSummary[] } };
  project_detail: { params: { project_id: string }; result: ProjectDetail };
  create_project: {
    params: { name: string; workdir: string; description?: string; session_id?: string };
    result: ProjectSummary;
  };
  add_session_to_project: { params: { project_id: string; session_id: string }; result: ProjectSummary };
  /**
   * The messages of a window of turns, read from the DAG rather than the repository: the path that
   * ends at `to_node` (a turn's last node, `node` of a timeline commit, whose seq is `to_seq`),
   * back to the first node after seq `from_seq` (the last seq of the turn before the window; 0 for
   * the start). Replay's step: it reads a few turns, not the whole session.
   */
  turn_messages: {
    params: { session_id: string; to_node: string; to_seq: number; from_seq: number };
    result: { session_id: string; messages: DagNode[] };
  };
  /** Set a project's status (`active`, `paused`, `done`); a paused or done project gets no agent auto-commit. */
  set_project_status: { params: { project_id: string; status: ProjectStatus }; result: ProjectSummary };
  /**
   * Undo what the agent committed for a turn of the session in its project (or in `project_id`):
   * `turn` (the newest agent commit of that turn on the project's branch) or `commit`. Refused with
   * `NOT_AGENT_COMMIT`, `AGENT_COMMIT_NOT_FOUND`, `COMMIT_NOT_FOUND`, `REVERT_CONFLICT`, `REVERT_REFUSED`.
   */
  revert_agent_turn: {
    params: { session_id: string; turn?: number; commit?: string; project_id?: string };
    result: RevertAgentTurnResult;
  };
  /** The session's agent commits in its project (or in `project_id`), and which were undone. Read-only. */
  project_agent_commits: { params: { session_id: string; project_id?: string }; result: AgentCommitsListResult };
  list_turn_files: { params: { session_id: string; turn: number; project_id?: string }; result: TurnFilesListResult };
  turn_file_diff: {
    params: { session_id: string; turn: number; path: string; project_id?: string };
    result: TurnFileDiffResult;
  };
  restore_turn_files: {
    params: { session_id: string; turn: number; paths?: string[]; project_id?: string };
    result: RestoreTurnFilesResult;
  };
  undo_restore_turn_files: {
    params: { session_id: string; restored: string; project_id?: string };
    result: RestoreTurnFilesResult;
  };
}

export type ActionName = keyof ActionMap;

/** A request as a transport carries it. */
export interface ActionRequest {
  /** Echoed in the response, so a client can match answers to requests. */
  id?: string | number;
  action: string;
  params?: unknown;
}

/** A response as a transport carries it: never a thrown error. */
export type ActionResponse =
  | { id?: string | number; ok: true; result: unknown }
  | { id?: string | number; ok: false; error: { code: string; message: string } };
