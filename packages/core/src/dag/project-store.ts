import type { Project, ProjectStatus } from '../model/types.js';

/**
 * Projects and their sessions (docs/design.md, 'The data model'). Implementations: `@entity-git/sqlite` (SQL through
 * kysely), `@entity-git/browser-fs` (IndexedDB), and `MemoryDag` in core.
 *
 * Errors are `EntityGitError`s: `INVALID_WORKDIR` (relative, missing, not a directory — checked
 * by the implementation where it can see a filesystem), `INVALID_PROJECT` (empty name, bad
 * status), `DUPLICATE_PROJECT` (a name already used), `PROJECT_NOT_FOUND`, `SESSION_NOT_FOUND`.
 */
export interface ProjectStore {
  /**
   * Create a project and return it: status `active`, no sessions, `created_at` now. `workdir` must
   * be absolute and, where the store sees a filesystem, an existing directory (`INVALID_WORKDIR`).
   * `name` must not be blank (`INVALID_PROJECT`) nor used by another project
   * (`DUPLICATE_PROJECT`). `description` defaults to `null`; `id` to a fresh generated one (a
   * given id must be a valid id: `INVALID_ID`).
   */
  createProject(input: { name: string; workdir: string; description?: string | null; id?: string }): Promise<Project>;
  /** Every project, oldest first, each with its session ids. `[]` when there is none. */
  listProjects(): Promise<Project[]>;
  /** One project, with its session ids, or `null` when there is none with that id (never an error). */
  getProject(projectId: string): Promise<Project | null>;
  /**
   * Change a project's status and return the project. A status not in `PROJECT_STATUSES` is
   * `INVALID_PROJECT`; an unknown project `PROJECT_NOT_FOUND`.
   */
  setProjectStatus(projectId: string, status: ProjectStatus): Promise<Project>;
  /**
   * Bind a session to a project (a session belongs to at most one; re-adding moves it, adding it
   * again to the same one is harmless). `PROJECT_NOT_FOUND` or `SESSION_NOT_FOUND` when either is
   * unknown.
   */
  addSessionToProject(projectId: string, sessionId: string): Promise<void>;
  /** The ids of a project's sessions, oldest first; `PROJECT_NOT_FOUND` for an unknown project. */
  sessionsOfProject(projectId: string): Promise<string[]>;
  /**
   * The project a session belongs to, or `null` when it belongs to none; `SESSION_NOT_FOUND` for an
   * unknown session.
   */
  projectOfSession(sessionId: string): Promise<Project | null>;
}
