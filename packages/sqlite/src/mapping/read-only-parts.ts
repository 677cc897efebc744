import { EntityGitError, type DagNode, type Project, type Session } from '@entity-git/core';
import { SqlDagWriter } from '../sql-dag-writer.js';
import { SqlProjectStore } from '../sql-project-store.js';

function refused(what: string): EntityGitError<'INVALID_OPTION'> {
  return new EntityGitError(
    'INVALID_OPTION',
    `[sqlite] ${what}: an application's database is mirrored as it is and never written (its own program writes it)`,
    { what },
  );
}

/** The writer of a store over an application's own tables: every write is refused, nothing is touched. */
export class ReadOnlyDagWriter extends SqlDagWriter {
  override async createSession(_input: Partial<Session> & { id: string }): Promise<Session> {
    throw refused('createSession');
  }
  override async appendNode(): Promise<DagNode> {
    throw refused('appendNode');
  }
  override async appendNodes(): Promise<DagNode[]> {
    throw refused('appendNodes');
  }
  override async fillNode(): Promise<DagNode> {
    throw refused('fillNode');
  }
  override async setHead(): Promise<void> {
    throw refused('setHead');
  }
}

/**
 * The projects of a store over an application's own tables: none (projects are entity-git's
 * tables, which such a database does not have and is not given); creating one is refused.
 */
export class NoProjectStore extends SqlProjectStore {
  override async createProject(): Promise<Project> {
    throw refused('createProject');
  }
  override async listProjects(): Promise<Project[]> {
    return [];
  }
  override async getProject(): Promise<Project | null> {
    return null;
  }
  override async setProjectStatus(): Promise<Project> {
    throw refused('setProjectStatus');
  }
  override async addSessionToProject(): Promise<void> {
    throw refused('addSessionToProject');
  }
  override async sessionsOfProject(): Promise<string[]> {
    return [];
  }
  override async projectOfSession(): Promise<Project | null> {
    return null;
  }
}
