import {
  assertId,
  EntityGitError,
  isAbsolutePath,
  PROJECT_STATUSES,
  type AppendNodeInput as CoreAppendNodeInput,
  type DagSource,
  type DagWriter,
  type Project,
  type ProjectStatus,
  type ProjectStore,
} from '@entity-git/core';
import { deleteDB } from 'idb';
import { dbError, PREFIX } from './errors.js';
import type { IdbDagOptions } from './idb-connection.js';
import { projectNotFound, projectOf, randomId, sessionIds, sessionNotFound, nextRev } from './idb-rows.js';
import { DEFAULT_DAG_NAME, type ProjectRow } from './idb-schema.js';
import { IdbDagWriter } from './idb-writes.js';

export { DEFAULT_BATCH_SIZE, DEFAULT_DAG_NAME, MAX_BATCH_SIZE } from './idb-schema.js';
export type { IdbDagOptions } from './idb-connection.js';

/** An append as {@link DagWriter.appendNode} takes it. */
export type AppendNodeInput = CoreAppendNodeInput;

/**
 * The DAG and the projects in IndexedDB (through `idb`), so the whole pipeline — DAG, mirror,
 * replay — runs offline in a page: a {@link DagSource}, {@link DagWriter} and
 * {@link ProjectStore} with MemoryDag's semantics. Every write is one IndexedDB transaction
 * (IndexedDB runs overlapping read-write transactions one at a time, across tabs too), so an
 * append's seq — the next after the session's highest — is never given twice.
 *
 * Open it with {@link openIdbDag}; values are copied in and out.
 */
export class IdbDag extends IdbDagWriter implements DagSource, DagWriter, ProjectStore {
  // ---- ProjectStore ----

  async createProject(input: {
    name: string;
    workdir: string;
    description?: string | null;
    id?: string;
  }): Promise<Project> {
    if (typeof input !== 'object' || input === null)
      throw new EntityGitError('INVALID_PROJECT', `${PREFIX} a project must be an object`);
    if (typeof input.name !== 'string' || input.name.trim() === '')
      throw new EntityGitError('INVALID_PROJECT', `${PREFIX} a project needs a name`);
    if (typeof input.workdir !== 'string' || !isAbsolutePath(input.workdir)) {
      throw new EntityGitError(
        'INVALID_WORKDIR',
        `${PREFIX} workdir must be an absolute path: ${JSON.stringify(input.workdir)}`,
        { workdir: input.workdir },
      );
    }
    const description = input.description ?? null;
    if (description !== null && typeof description !== 'string')
      throw new EntityGitError('INVALID_PROJECT', `${PREFIX} a description must be a string or null`);
    if (input.id !== undefined) assertId(input.id, 'project id');
    if (this.options.workdirs) await this.checkWorkdir(input.workdir);
    const row: ProjectRow = {
      id: input.id ?? randomId(),
      name: input.name,
      workdir: input.workdir,
      status: 'active',
      description,
      created_at: this.options.now(),
      ord: 0,
    };
    await this.write(['projects'], `creating project ${JSON.stringify(input.name)}`, async (tx) => {
      const store = tx.objectStore('projects');
      if ((await store.index('by_name').getKey(row.name)) !== undefined) {
        throw new EntityGitError(
          'DUPLICATE_PROJECT',
          `${PREFIX} a project named ${JSON.stringify(row.name)} exists already`,
          { name: row.name },
        );
      }
      if ((await store.getKey(row.id)) !== undefined)
        throw new EntityGitError(
          'DUPLICATE_PROJECT',
          `${PREFIX} a project with id ${JSON.stringify(row.id)} exists already`,
          { projectId: row.id },
        );
      const last = await store.index('by_ord').openCursor(null, 'prev');
      row.ord = (last?.value.ord ?? 0) + 1;
      await store.add(row);
    });
    return projectOf(row, []);
  }

  private async checkWorkdir(workdir: string): Promise<void> {
    let isDir = false;
    try {
      isDir = (await this.options.workdirs!.stat(workdir)).isDirectory();
    } catch {
      isDir = false;
    }
    if (!isDir)
      throw new EntityGitError(
        'INVALID_WORKDIR',
        `${PREFIX} workdir is not an existing directory: ${JSON.stringify(workdir)}`,
        { workdir },
      );
  }

  async listProjects(): Promise<Project[]> {
    return this.read(['projects', 'sessions'], 'listing projects', async (tx) => {
      const rows = await tx.objectStore('projects').index('by_ord').getAll();
      const out: Project[] = [];
      for (const row of rows) out.push(projectOf(row, await sessionIds(tx, row.id)));
      return out;
    });
  }

  async getProject(projectId: string): Promise<Project | null> {
    if (typeof projectId !== 'string') return null;
    return this.read(['projects', 'sessions'], `reading project ${JSON.stringify(projectId)}`, async (tx) => {
      const row = await tx.objectStore('projects').get(projectId);
      return row ? projectOf(row, await sessionIds(tx, row.id)) : null;
    });
  }

  async setProjectStatus(projectId: string, status: ProjectStatus): Promise<Project> {
    return this.write(
      ['projects', 'sessions'],
      `setting the status of project ${JSON.stringify(projectId)}`,
      async (tx) => {
        const store = tx.objectStore('projects');
        const row = typeof projectId === 'string' ? await store.get(projectId) : undefined;
        if (!row) throw projectNotFound(projectId);
        if (!PROJECT_STATUSES.includes(status))
          throw new EntityGitError(
            'INVALID_PROJECT',
            `${PREFIX} status must be one of ${PROJECT_STATUSES.join(', ')}`,
            { status },
          );
        const next = { ...row, status };
        await store.put(next);
        return projectOf(next, await sessionIds(tx, row.id));
      },
    );
  }

  async addSessionToProject(projectId: string, sessionId: string): Promise<void> {
    await this.write(
      ['projects', 'sessions'],
      `adding session ${JSON.stringify(sessionId)} to project ${JSON.stringify(projectId)}`,
      async (tx) => {
        if (typeof projectId !== 'string' || (await tx.objectStore('projects').getKey(projectId)) === undefined)
          throw projectNotFound(projectId);
        const sessions = tx.objectStore('sessions');
        const row = typeof sessionId === 'string' ? await sessions.get(sessionId) : undefined;
        if (!row) throw sessionNotFound(sessionId);
        if (row.project_id !== projectId) await sessions.put({ ...row, project_id: projectId, rev: nextRev(row) });
      },
    );
  }

  async sessionsOfProject(projectId: string): Promise<string[]> {
    return this.read(
      ['projects', 'sessions'],
      `listing the sessions of project ${JSON.stringify(projectId)}`,
      async (tx) => {
        if (typeof projectId !== 'string' || (await tx.objectStore('projects').getKey(projectId)) === undefined)
          throw projectNotFound(projectId);
        return sessionIds(tx, projectId);
      },
    );
  }

  async projectOfSession(sessionId: string): Promise<Project | null> {
    return this.read(
      ['projects', 'sessions'],
      `reading the project of session ${JSON.stringify(sessionId)}`,
      async (tx) => {
        const row = typeof sessionId === 'string' ? await tx.objectStore('sessions').get(sessionId) : undefined;
        if (!row) throw sessionNotFound(sessionId);
        if (row.project_id === null) return null;
        const project = await tx.objectStore('projects').get(row.project_id);
        return project ? projectOf(project, await sessionIds(tx, project.id)) : null;
      },
    );
  }
}

/** Open (creating on first use) the IndexedDB DAG. */
export async function openIdbDag(options: IdbDagOptions = {}): Promise<IdbDag> {
  return new IdbDag(options).open();
}

/** Delete a DAG database entirely (every session, node and project in it). */
export async function deleteIdbDag(name: string = DEFAULT_DAG_NAME): Promise<void> {
  try {
    await deleteDB(name);
  } catch (err) {
    throw dbError(err, `deleting the DAG database ${JSON.stringify(name)}`);
  }
}
