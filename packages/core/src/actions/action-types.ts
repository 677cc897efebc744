import type { ExportFormat } from '../export/export-session.js';
import type { DagNode, JsonValue, ProjectStatus, Role } from '../model/types.js';
import type { SearchResult } from '../search/search-types.js';
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

/** One turn of a branch in `session_stats`: its own nodes' figures (null: no node of it records one). */
export interface StatsTurn {
  turn: number;
  /** The turn's last node, and its seq (the commit's `Node:` and `Seq:` trailers). */
  node: string;
  seq: number;
  /** False while the turn is the branch's unfinished last one (it has no commit yet). */
  complete: boolean;
  /** The turn's commit on the branch, when the repository holds it as the DAG derives it; else null. */
  commit: string | null;
  tokens: number | null;
  cost: number | null;
}

/** One branch in `session_stats`: its turns, and their sums. */
export interface StatsBranch {
  name: string;
  /** The branch of the session's head. */
  head: boolean;
  turns: StatsTurn[];
  tokens: number | null;
  cost: number | null;
}

/** `session_stats`: the session's figures count each node once, however many branches share it. */
export interface SessionStats {
  session_id: string;
  branches: StatsBranch[];
  tokens: number | null;
  cost: number | null;
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
  /**
   * Tokens and cost per turn, per branch (every branch, or `branch`) and for the session, from the
   * DAG's rows as the mirror's metadata keys read them. Read-only.
   */
  session_stats: { params: { session_id: string; branch?: string }; result: SessionStats };
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
  /**
   * Messages of every session (or `session_id`) holding every word of `query` (or matching it as a
   * regular expression with `regex`), on each session's HEAD branch, on `branch`, or on every branch
   * (`all_branches`); a message shared by branches is one hit. Needs the `search` option.
   */
  search_messages: {
    params: {
      query: string;
      session_id?: string;
      role?: Role;
      branch?: string;
      all_branches?: boolean;
      regex?: boolean;
      limit?: number;
    };
    result: SearchResult;
  };
  /** A branch (default HEAD's) up to `turn` as a file: Markdown, one HTML page or JSONL, redacted (export-actions.ts). */
  export_transcript: {
    params: { session_id: string; format: ExportFormat; branch?: string; turn?: number };
    result: ExportTranscriptResult;
  };
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

/** What `export_transcript` answers: the file's text and what to save it as. */
export interface ExportTranscriptResult {
  session_id: string;
  format: ExportFormat;
  /** The suggested file name (`<session>-<branch>.<format>`). */
  file_name: string;
  /** `text/markdown`, `text/html` or `application/x-ndjson`, with `; charset=utf-8`. */
  media_type: string;
  content: string;
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
