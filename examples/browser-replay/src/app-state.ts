// The app's state: what the page shows and what the user is doing, the route read from the hash,
// and the access token kept from the server's link.
import type {
  AgentCommitsListResult,
  ProjectStatusResult,
  ProjectSummary,
  ProjectTurnResult,
  SessionSummary,
} from 'ws-server/protocol';
import type { Backend } from './backend.js';
import type { ImportForm } from './import-view.js';
import type { ProjectPage } from './project-view.js';
import type { SaveState } from './save-view.js';
import type { SearchState } from './search-view.js';
import type { SessionPage } from './session-page.js';
import type { RestoreState } from './restore-view.js';
import type { TurnFilesState } from './turn-files-view.js';
import type { UndoState } from './undo-view.js';
import type { NewProjectForm } from './sidebar-view.js';

export type Route =
  | { page: 'home' }
  | { page: 'session'; id: string; sha?: string; branch?: string }
  | { page: 'project'; id: string }
  | { page: 'search'; query: string; allBranches: boolean };

/** A banner. `at` is the page (hash) it belongs to: it goes when the user leaves that page; none for the app's own state (offline). */
export interface Notice {
  kind: 'info' | 'warn' | 'error';
  text: string;
  detail?: string;
  at?: string;
}

export interface State {
  backend: Backend;
  notice: Notice | null;
  /** The server refused our token: a field to give another. */
  tokenRefused: boolean;
  sessions: SessionSummary[];
  projects: ProjectSummary[];
  /** Sessions with a copy in this browser. */
  saved: Set<string>;
  route: Route;
  session: SessionPage | null;
  project: ProjectPage | null;
  save: SaveState | null;
  newProject: NewProjectForm;
  importForm: ImportForm;
  /** The project auto-commit of the last turn, per session (sent from here or pushed by the server). */
  projectTurns: Map<string, ProjectTurnResult>;
  /** Each project's workdir as last read with `project_status`. */
  projectStatus: Map<string, ProjectStatusResult>;
  /** Each session's agent commits in its project, as last read with `project_agent_commits` (online only). */
  agentCommits: Map<string, AgentCommitsListResult>;
  /** The last undo of an agent turn asked from this page, and how it went. */
  undo: UndoState | null;
  /** The files the turn on screen changed (`list_turn_files`), and the diff open among them. */
  turnFiles: TurnFilesState | null;
  /** The last restore of a turn's files asked from this page, and its undo. */
  restore: RestoreState | null;
  draft: string;
  sending: boolean;
  appCached: boolean;
  loading: boolean;
  drawerOpen: boolean;
  /** The hits of the search the route names. */
  search: SearchState | null;
}

export const TOKEN_KEY = 'entity-git-replay-token';

/** `#token=…` (the link the server prints) is kept for later loads and taken out of the address bar. */
export function takeToken(): string | null {
  const m = /(?:^#|&)token=([^&]*)/.exec(location.hash);
  if (m) {
    const token = decodeURIComponent(m[1]!);
    localStorage.setItem(TOKEN_KEY, token);
    history.replaceState(null, '', `${location.pathname}${location.search}#/`);
    return token;
  }
  return localStorage.getItem(TOKEN_KEY);
}

export function parseRoute(hash: string): Route {
  const parts = hash
    .replace(/^#\/?/, '')
    .split('/')
    .filter((p) => p !== '')
    .map((p) => decodeURIComponent(p));
  if (parts[0] === 's' && parts[1]) {
    const r: Route = { page: 'session', id: parts[1] };
    if (parts[2] === 'c' && parts[3]) r.sha = parts[3];
    if (parts[2] === 'c' && parts[4]) r.branch = parts[4];
    return r;
  }
  if (parts[0] === 'p' && parts[1]) return { page: 'project', id: parts[1] };
  if (parts[0] === 'search' && parts[1]) return { page: 'search', query: parts[1], allBranches: parts[2] === 'all' };
  return { page: 'home' };
}
