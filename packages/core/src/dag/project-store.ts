import type { Project, ProjectStatus } from '../model/types.js';

/**
 * Projects and their sessions (DESIGN.md §4). Implementations: `@entity-git/sqlite` (SQL through
 * kysely), `@entity-git/browser-fs` (IndexedDB), and `MemoryDag` in core.
 *
 * Errors are `EntityGitError`s: `INVALID_WORKDIR` (relative, missing, not a directory — checked
 * by the implementation where it can see a filesystem), `INVALID_PROJECT` (empty name, bad
 * status), `DUPLICATE_PROJECT` (a name already used), `PROJECT_NOT_FOUND`, `SESSION_NOT_FOUND`.
 */
export interface ProjectStore {
  /** Create a project with status `active`. `workdir` must be absolute. */
  createProject(input: { name: string; workdir: string; description?: string | null; id?: string }): Promise<Project>;
  /** Every project, oldest first. */
  listProjects(): Promise<Project[]>;
  /** One project, or `null`. */
  getProject(projectId: string): Promise<Project | null>;
  /** Change a project's status. */
  setProjectStatus(projectId: string, status: ProjectStatus): Promise<Project>;
  /** Bind a session to a project (a session belongs to at most one; re-adding moves it). */
  addSessionToProject(projectId: string, sessionId: string): Promise<void>;
  /** The ids of a project's sessions, oldest first. */
  sessionsOfProject(projectId: string): Promise<string[]>;
  /** The project a session belongs to, or `null`. */
  projectOfSession(sessionId: string): Promise<Project | null>;
}
