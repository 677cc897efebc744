import type {
  BranchInfo,
  CommitInfo,
  DagNode,
  Difference,
  JsonValue,
  Project,
  ReconcileAction,
  ReconcileEntry,
  TurnView,
} from '@entity-git/core';

// The `--json` output of every command. These shapes are a contract with scripts
// (docs/cli-json.md): fields are only ever added, never renamed or removed, and every field is
// always present (absent values are null, not missing).

export interface DifferenceJson {
  kind: Difference['kind'];
  branch: string | null;
  expected: string | null;
  actual: string | null;
  detail: string;
}

export interface ErrorJson {
  code: string;
  message: string;
}

export interface SyncJson {
  ok: boolean;
  total: number;
  counts: Record<ReconcileAction, number>;
  sessions: { sessionId: string; action: ReconcileAction; differences: DifferenceJson[]; error: ErrorJson | null }[];
  /** The known application schema the database was recognised as (`messages`, `flat-dag`), or null. */
  recognised: string | null;
}

export interface VerifyJson {
  ok: boolean;
  sessions: { sessionId: string; ok: boolean; differences: DifferenceJson[]; error: ErrorJson | null }[];
  /** The known application schema the database was recognised as (`messages`, `flat-dag`), or null. */
  recognised: string | null;
}

export interface CommitJson {
  sha: string;
  parents: string[];
  time: number;
  turn: number | null;
  node: string | null;
  seq: number | null;
  subject: string;
  message: string;
}

export interface LogJson {
  sessionId: string;
  branch: string | null;
  commits: CommitJson[];
  /** The known application schema the database was recognised as (`messages`, `flat-dag`), or null. */
  recognised: string | null;
}

export interface BranchJson {
  name: string;
  commit: string;
  turns: number;
  head: boolean;
}

export interface BranchesJson {
  sessionId: string;
  head: string | null;
  branches: BranchJson[];
  /** The known application schema the database was recognised as (`messages`, `flat-dag`), or null. */
  recognised: string | null;
}

export interface ShowJson {
  sessionId: string;
  branch: string;
  commit: string;
  turn: number;
  turns: number;
  prev: string | null;
  next: string | null;
  meta: JsonValue;
  messages: DagNode[];
  /** The known application schema the database was recognised as (`messages`, `flat-dag`), or null. */
  recognised: string | null;
}

export interface ProjectJson {
  id: string;
  name: string;
  workdir: string;
  status: Project['status'];
  description: string | null;
  created_at: number;
  sessions: string[];
}

export interface ProjectsJson {
  projects: ProjectJson[];
}

export interface ProjectOneJson {
  project: ProjectJson;
}

/** The library's `[entity-git] [sqlite]` tags are for logs; a CLI reader knows who is talking. */
export function untagged(message: string): string {
  return message
    .replace(/^(\[[\w-]+\] )+/, '')
    .replace(/\s*\n\s*/g, ' ')
    .trim();
}

export function differenceJson(d: Difference): DifferenceJson {
  return {
    kind: d.kind,
    branch: d.branch ?? null,
    expected: d.expected ?? null,
    actual: d.actual ?? null,
    detail: untagged(d.detail),
  };
}

export function syncEntryJson(e: ReconcileEntry): SyncJson['sessions'][number] {
  return {
    sessionId: e.sessionId,
    action: e.action,
    differences: e.differences.map(differenceJson),
    error: e.error ? { code: e.error.code, message: untagged(e.error.message) } : null,
  };
}

export function commitJson(c: CommitInfo): CommitJson {
  return {
    sha: c.sha,
    parents: [...c.parents],
    time: c.time,
    turn: c.turn,
    node: c.node,
    seq: c.seq,
    subject: c.subject,
    message: c.message,
  };
}

export function branchJson(b: BranchInfo): BranchJson {
  return { name: b.name, commit: b.commit, turns: b.turns, head: b.head };
}

export function showJson(v: TurnView, recognised: string | null): ShowJson {
  return {
    sessionId: v.sessionId,
    branch: v.branch,
    commit: v.commit,
    turn: v.turn,
    turns: v.turns,
    prev: v.prev,
    next: v.next,
    meta: v.meta,
    messages: v.messages.map(nodeJson),
    recognised,
  };
}

export function nodeJson(n: DagNode): DagNode {
  return {
    id: n.id,
    session_id: n.session_id,
    seq: n.seq,
    role: n.role,
    content: n.content,
    predecessor: n.predecessor,
    caller: n.caller,
    created_at: n.created_at,
    metadata: n.metadata,
  };
}

export function projectJson(p: Project): ProjectJson {
  return {
    id: p.id,
    name: p.name,
    workdir: p.workdir,
    status: p.status,
    description: p.description,
    created_at: p.created_at,
    sessions: [...p.sessions],
  };
}
