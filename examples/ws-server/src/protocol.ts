// The wire protocol: core's actions plus the ones only a server can offer. Type-only, with no
// Node import, so the browser app type-checks its client against the very same map.
import type { ActionMap, BranchSummary, DagNode, HistoryResult, ProjectSummary, Session } from '@entity-git/core';

export type {
  ActionRequest,
  ActionResponse,
  AgentCommitsListResult,
  AgentCommitSummary,
  RevertAgentTurnResult,
  BranchSummary,
  CheckoutResult,
  HistoryResult,
  ProjectDetail,
  ProjectStatus,
  ProjectSummary,
  SessionSummary,
  TimelineCommit,
} from '@entity-git/core';

/** The path the WebSocket upgrade is accepted on. */
export const WS_PATH = '/ws';
/** The query-string parameter that carries the token on the upgrade request. */
export const TOKEN_PARAM = 'token';

/** What `create_project` did about the workdir's git repository (the "create / reuse a git repo" step). */
export type RepoSetup = 'reused' | 'created' | 'unavailable';

/** `create_project`'s parameters here: core's, and `init_repo` to `git init` a workdir that is in no repository (else `NOT_A_REPOSITORY`). */
export type CreateProjectParams = ActionMap['create_project']['params'] & { init_repo?: boolean };

export interface ExportSessionResult {
  /** The session row exactly as the server's DAG has it (head included). */
  session: Session;
  /** Whole nodes with seq greater than the request's `after_seq`, in seq order, at most `limit`. */
  nodes: DagNode[];
  /** Pass as `after_seq` for the next page; null on the last page. */
  next_after_seq: number | null;
  /** The server's branches now: what a copy of the session must rebuild, commit for commit. */
  branches: BranchSummary[];
}

/** A page of a branch's timeline (`git_history` given `offset` or `limit`). */
export interface HistoryPageResult extends HistoryResult {
  /** The branch's turn count: M of "Turn N / M". */
  total: number;
  /** The page's first commit counted from the branch's tip (0); `commits` are that one and the older ones after it. */
  offset: number;
}

export interface SendMessageResult {
  session_id: string;
  /** The user node written. */
  node: DagNode;
  /** The agent's reply, when the server has an agent. */
  reply: DagNode | null;
  /** The branch HEAD names after the sync (the new node's branch) and its tip. */
  branch: string | null;
  commit: string | null;
  /** True when the message started a branch that did not exist before (a fork). */
  branch_created: boolean;
  branches: BranchSummary[];
  /** False when the DAG was written but the mirror failed (it is retried by the next write or start-up). */
  synced: boolean;
  /**
   * The project auto-commit of this turn, when the session is bound to a project and the server
   * runs project commits; null otherwise. The same value is pushed to every socket as a
   * {@link ProjectTurnEvent}.
   */
  project: ProjectTurnResult | null;
}

/**
 * What the project auto-commit did after a turn (docs/project-git.md): the agent's edits committed in
 * the project's own repository, or skipped — with `warning` the sentence the UI shows. For
 * `reason: 'uncommitted-changes'` (the user has edits of their own) it is exactly
 * `you have uncommitted changes, the agent's edits won't be auto-committed for now`, and the
 * workdir, its HEAD and its index are left as they were. `nothing-to-commit` has no warning.
 */
export type ProjectTurnResult =
  | {
      status: 'committed';
      project_id: string;
      /** The agent's commit, as `git log` in the workdir reads it (subject `[agent <session_id>] turn <N>: …`). */
      commit: ProjectCommit;
      /** Repository-relative paths it recorded. */
      paths: string[];
      /** Commits made first for edits of earlier turns left pending by a skip (oldest first). */
      deferred: string[];
    }
  | {
      status: 'skipped';
      project_id: string;
      /** `uncommitted-changes`, `nothing-to-commit`, `project-paused`, `detached-head`, `merge-in-progress`, … */
      reason: string;
      warning: string | null;
      /** The changes that are the user's and blocked the commit (repository-relative). */
      user_paths: string[];
      /** The agent's changes left uncommitted (kept pending; a later clean turn commits them). */
      agent_paths: string[];
    }
  | {
      /** Git failed for good (the DAG and the session repository are unaffected). */
      status: 'failed';
      project_id: string;
      code: string;
      message: string;
    };

/**
 * Server → client, unsolicited (a frame with `event` and no `id`): after each turn written by
 * `send_message` in a session bound to a project, to every open socket. Clients that only match
 * responses by `id` can ignore it.
 */
export interface ProjectTurnEvent {
  event: 'project_turn';
  session_id: string;
  result: ProjectTurnResult;
}

/** Every unsolicited message the server sends. */
export type ServerEvent = ProjectTurnEvent;

export interface ProjectCommit {
  sha: string;
  author: string;
  committer: string;
  /** Seconds since the epoch. */
  time: number;
  subject: string;
  /** True for the agent's auto-commits (committer "agent (<model> via OpenProgram)"). */
  agent: boolean;
}

export interface ProjectLogResult {
  project_id: string;
  workdir: string;
  /** False when the workdir is not (yet) a git repository. */
  repo: boolean;
  /** Newest first. */
  commits: ProjectCommit[];
}

/** `project_status`: the workdir read without committing (the warning of docs/design.md, 'Safety rules', before any turn is skipped). */
export interface ProjectStatusResult {
  project_id: string;
  workdir: string;
  /** The project's own status (`active`, `paused`, `done`). */
  status: ProjectSummary['status'];
  /** The workdir's state: `repository`, `not-a-repository`, `missing`, … (`unknown` when the server runs no project commits). */
  state: string;
  /** True when the user has uncommitted changes: the next turn's agent edits would not be auto-committed. */
  dirty: boolean;
  /** The user's changed paths (repository-relative), at most 50; `user_paths_count` is the whole count. */
  user_paths: string[];
  user_paths_count: number;
  /** The design's sentence when dirty, else null. */
  warning: string | null;
}

/** `import_projects`: the git repositories found under `dir`, each as a planned (or, applied, created) project. */
export interface ImportProjectsResult {
  dir: string;
  /** False for the dry run (nothing created), true when the `new` ones were created. */
  applied: boolean;
  candidates: Array<{
    workdir: string;
    name: string;
    /**
     * `new`: would be created; `created`: was; `exists`: a project has this workdir already;
     * `refused`: the workdir policy refuses it (`reason`), as `create_project` would.
     */
    status: 'new' | 'created' | 'exists' | 'refused';
    project_id: string | null;
    /** Why the workdir is refused (only with `refused`). */
    reason?: string;
  }>;
}

export interface ServerInfo {
  name: string;
  actions: string[];
  /** Whether `send_message` gets a reply from an agent. */
  agent: boolean;
}

/** Every action the server answers, with its parameters and result. */
export type ServerActionMap = Omit<ActionMap, 'create_project' | 'git_history'> & {
  /** Core's `create_project`, then the workdir's git repository is reused, or created (`git init`) when `init_repo` asks. */
  create_project: { params: CreateProjectParams; result: ProjectSummary & { repo: RepoSetup } };
  /**
   * Core's `git_history`, or with `offset` / `limit` one page of it (newest first: `limit`
   * commits from the `offset`-th newest; default `limit` 200, at most 10,000) and the turn count.
   * An `offset` past the last commit is `INVALID_ARGUMENT`. Core's own handlers (the app offline)
   * ignore the paging and answer the whole timeline: a result without `total` is whole.
   */
  git_history: {
    params: { session_id: string; branch?: string; offset?: number; limit?: number };
    result: HistoryResult | HistoryPageResult;
  };
  /** A session's DAG rows, paged, for "Save for offline". Default `limit` 1000, at most 10,000. */
  export_session: { params: { session_id: string; after_seq?: number; limit?: number }; result: ExportSessionResult };
  /**
   * Write a user message continuing from `continue_from` (a node of the session; default: the tip
   * of HEAD's branch). From an old turn this is a fork: the sync makes the new branch, and the DAG
   * head moves to the new message (or to the agent's reply). In a session bound to a project the
   * turn ends with the project auto-commit (a snapshot of the workdir before the agent runs, the
   * paths its tools wrote after); its outcome is `project`, and is pushed as a {@link ProjectTurnEvent}.
   */
  send_message: {
    params: { session_id: string; content: string; continue_from?: string | null };
    result: SendMessageResult;
  };
  /** The project's own git history (read-only `git log` in its workdir). Default `limit` 50, at most 500. */
  project_log: { params: { project_id: string; limit?: number }; result: ProjectLogResult };
  server_info: { params: Record<string, never>; result: ServerInfo };
  /** Whether the project's workdir has uncommitted changes of the user's; read-only (nothing is committed or written). */
  project_status: { params: { project_id: string }; result: ProjectStatusResult };
  /**
   * The design's migration step: every git repository under `dir` (an absolute directory of the
   * server's machine, 3 levels deep) that is no project yet, planned as one. A dry run unless
   * `apply: true`; nothing is ever written in the repositories.
   */
  import_projects: { params: { dir: string; apply?: boolean }; result: ImportProjectsResult };
};

export type ServerActionName = keyof ServerActionMap;
