import { randomUUID } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import {
  EntityGitError,
  PROJECT_STATUSES,
  assertId,
  isEntityGitError,
  type Project,
  type ProjectStatus,
  type ProjectStore,
} from '@entity-git/core';
import type { Kysely } from 'kysely';
import { strictlyIncreasing } from './clock.js';
import {
  assertStorableText,
  dbError,
  isStorableText,
  resolveEngine,
  writeTransaction,
  type SqlEngine,
} from './engine.js';
import { PROJECT_COLUMNS, col, decodeProject, selection } from './rows.js';
import { resolveSchemaNames, type SchemaNames, type SchemaNamesInput } from './schema-names.js';

export interface SqlProjectStoreOptions {
  /** A Kysely instance on SQLite or PostgreSQL. */
  db: Kysely<any>;
  /** Table and column names, when the database is not laid out with the contract's names (`DEFAULT_SCHEMA_NAMES`). */
  names?: SchemaNamesInput;
  /** The engine, when it cannot be told from the dialect (default: detected). */
  engine?: SqlEngine;
  /** The clock for `created_at`, in seconds since the epoch (default: `Date.now() / 1000`). */
  now?: () => number;
}

/**
 * {@link ProjectStore} over SQL. A project's sessions are the sessions rows whose `project_id`
 * points at it — one source of truth, so a session can never be listed in two projects.
 *
 * `createProject` checks the workdir on this machine's filesystem (absolute, existing, a
 * directory) and stores it normalized by `path.resolve` (no `..`, no trailing slash), so one
 * directory has one spelling for the per-workdir lock of the auto-commit.
 */
export class SqlProjectStore implements ProjectStore {
  readonly options: Readonly<{ db: Kysely<any>; names: SchemaNames; engine: SqlEngine; now: () => number }>;

  constructor(options: SqlProjectStoreOptions) {
    this.options = Object.freeze({
      db: options.db,
      names: resolveSchemaNames(options.names),
      engine: resolveEngine(options.db, options.engine),
      now: strictlyIncreasing(options.now ?? (() => Date.now() / 1000)),
    });
  }

  async createProject(input: {
    name: string;
    workdir: string;
    description?: string | null;
    id?: string;
  }): Promise<Project> {
    if (typeof input !== 'object' || input === null)
      throw new EntityGitError('INVALID_PROJECT', '[sqlite] a project must be an object');
    const { name, description = null } = input;
    if (typeof name !== 'string' || name.trim() === '')
      throw new EntityGitError('INVALID_PROJECT', '[sqlite] a project needs a name');
    if (description !== null && typeof description !== 'string')
      throw new EntityGitError('INVALID_PROJECT', '[sqlite] description must be a string or null');
    assertStorableText(name, 'project name', 'INVALID_PROJECT', this.options.engine);
    assertStorableText(description, 'project description', 'INVALID_PROJECT', this.options.engine);
    const workdir = await checkWorkdir(input.workdir);
    const id = input.id ?? `proj_${randomUUID()}`;
    assertId(id, 'project id');
    assertStorableText(id, 'project id', 'INVALID_ID', this.options.engine);
    const P = this.options.names.projects;
    if (P.description === null && description !== null) {
      throw new EntityGitError(
        'INVALID_OPTION',
        '[sqlite] names.projects.description is null, so a description cannot be stored',
      );
    }
    const project: Project = {
      id,
      name,
      workdir,
      status: 'active',
      description,
      created_at: this.options.now(),
      sessions: [],
    };
    const values: Record<string, unknown> = {
      [P.id]: id,
      [P.name]: name,
      [P.workdir]: workdir,
      [P.status]: project.status,
      [P.created_at]: project.created_at,
    };
    if (P.description !== null) values[P.description] = description;
    try {
      await this.write(`creating project ${JSON.stringify(name)}`, async (trx) => {
        if (await this.nameTaken(trx, name)) throw duplicateName(name);
        const clash = await trx
          .selectFrom(P.table)
          .select(col(P.id).as('id'))
          .where(col(P.id), '=', id)
          .executeTakeFirst();
        if (clash)
          throw new EntityGitError(
            'INVALID_PROJECT',
            `[sqlite] a project with id ${JSON.stringify(id)} exists already`,
            {
              projectId: id,
            },
          );
        await trx.insertInto(P.table).values(values).execute();
      });
    } catch (err) {
      // On PostgreSQL two transactions can both find the name free; the unique index stops the
      // second insert, and this says why.
      if (isEntityGitError(err, 'DB_ERROR') && (await this.nameTaken(this.options.db, name).catch(() => false)))
        throw duplicateName(name);
      throw err;
    }
    return project;
  }

  async listProjects(): Promise<Project[]> {
    const { db, names } = this.options;
    const P = names.projects;
    const S = names.sessions;
    const projectId = this.projectIdColumn();
    try {
      const rows = await db
        .selectFrom(P.table)
        .select(selection(P, PROJECT_COLUMNS))
        .orderBy(col(P.created_at))
        .orderBy(col(P.id))
        .execute();
      const members = await db
        .selectFrom(S.table)
        .select([col(S.id).as('id'), col(projectId).as('project_id')])
        .where(col(projectId), 'is not', null)
        .orderBy(col(S.created_at))
        .orderBy(col(S.id))
        .execute();
      const byProject = new Map<string, string[]>();
      for (const m of members) {
        const key = String(m.project_id);
        const list = byProject.get(key) ?? [];
        list.push(String(m.id));
        byProject.set(key, list);
      }
      return rows.map((r) => decodeProject(r, byProject.get(String(r.id)) ?? []));
    } catch (err) {
      throw dbError(err, 'listing projects');
    }
  }

  async getProject(projectId: string): Promise<Project | null> {
    if (typeof projectId !== 'string' || !isStorableText(projectId, this.options.engine)) return null;
    try {
      return await this.readProject(this.options.db, projectId);
    } catch (err) {
      throw dbError(err, `reading project ${JSON.stringify(projectId)}`);
    }
  }

  async setProjectStatus(projectId: string, status: ProjectStatus): Promise<Project> {
    if (!PROJECT_STATUSES.includes(status)) {
      throw new EntityGitError('INVALID_PROJECT', `[sqlite] status must be one of ${PROJECT_STATUSES.join(', ')}`, {
        status,
      });
    }
    const P = this.options.names.projects;
    return this.write(`setting the status of project ${JSON.stringify(projectId)}`, async (trx) => {
      await this.requireProject(trx, projectId);
      await trx
        .updateTable(P.table)
        .set({ [P.status]: status })
        .where(col(P.id), '=', projectId)
        .execute();
      return (await this.readProject(trx, projectId))!;
    });
  }

  async addSessionToProject(projectId: string, sessionId: string): Promise<void> {
    const S = this.options.names.sessions;
    await this.write(
      `adding session ${JSON.stringify(sessionId)} to project ${JSON.stringify(projectId)}`,
      async (trx) => {
        await this.requireProject(trx, projectId);
        await this.requireSession(trx, sessionId);
        await trx
          .updateTable(S.table)
          .set({ [this.projectIdColumn()]: projectId })
          .where(col(S.id), '=', sessionId)
          .execute();
      },
    );
  }

  async sessionsOfProject(projectId: string): Promise<string[]> {
    const { db } = this.options;
    try {
      await this.requireProject(db, projectId);
      return await this.memberIds(db, projectId);
    } catch (err) {
      throw dbError(err, `listing the sessions of project ${JSON.stringify(projectId)}`);
    }
  }

  async projectOfSession(sessionId: string): Promise<Project | null> {
    const { db } = this.options;
    try {
      const projectId = await this.requireSession(db, sessionId);
      return projectId === null ? null : await this.readProject(db, projectId);
    } catch (err) {
      throw dbError(err, `reading the project of session ${JSON.stringify(sessionId)}`);
    }
  }

  private projectIdColumn(): string {
    const column = this.options.names.sessions.project_id;
    if (column === null) {
      throw new EntityGitError(
        'INVALID_OPTION',
        '[sqlite] projects need the sessions.project_id column, and names.sessions.project_id is null',
      );
    }
    return column;
  }

  private async readProject(db: Kysely<any>, projectId: string): Promise<Project | null> {
    const P = this.options.names.projects;
    const row = await db
      .selectFrom(P.table)
      .select(selection(P, PROJECT_COLUMNS))
      .where(col(P.id), '=', projectId)
      .executeTakeFirst();
    return row ? decodeProject(row, await this.memberIds(db, projectId)) : null;
  }

  private async memberIds(db: Kysely<any>, projectId: string): Promise<string[]> {
    const S = this.options.names.sessions;
    const rows = await db
      .selectFrom(S.table)
      .select(col(S.id).as('id'))
      .where(col(this.projectIdColumn()), '=', projectId)
      .orderBy(col(S.created_at))
      .orderBy(col(S.id))
      .execute();
    return rows.map((r) => String(r.id));
  }

  private async requireProject(db: Kysely<any>, projectId: string): Promise<void> {
    const P = this.options.names.projects;
    const missing = new EntityGitError('PROJECT_NOT_FOUND', `[sqlite] no project ${JSON.stringify(projectId)}`, {
      projectId,
    });
    if (typeof projectId !== 'string' || !isStorableText(projectId, this.options.engine)) throw missing;
    const row = await db
      .selectFrom(P.table)
      .select(col(P.id).as('id'))
      .where(col(P.id), '=', projectId)
      .executeTakeFirst();
    if (!row) throw missing;
  }

  /** The session's project id; `SESSION_NOT_FOUND` when there is no such session. */
  private async requireSession(db: Kysely<any>, sessionId: string): Promise<string | null> {
    const S = this.options.names.sessions;
    const missing = new EntityGitError('SESSION_NOT_FOUND', `[sqlite] no session ${JSON.stringify(sessionId)}`, {
      sessionId,
    });
    if (typeof sessionId !== 'string' || !isStorableText(sessionId, this.options.engine)) throw missing;
    const row = await db
      .selectFrom(S.table)
      .select(col(this.projectIdColumn()).as('project_id'))
      .where(col(S.id), '=', sessionId)
      .executeTakeFirst();
    if (!row) throw missing;
    return row.project_id === null || row.project_id === undefined ? null : String(row.project_id);
  }

  private async nameTaken(db: Kysely<any>, name: string): Promise<boolean> {
    const P = this.options.names.projects;
    return (
      (await db.selectFrom(P.table).select(col(P.id).as('id')).where(col(P.name), '=', name).executeTakeFirst()) !==
      undefined
    );
  }

  private async write<T>(what: string, fn: (trx: Kysely<any>) => Promise<T>): Promise<T> {
    try {
      return await writeTransaction(this.options.db, this.options.engine, fn);
    } catch (err) {
      throw dbError(err, what);
    }
  }
}

/** An absolute path of an existing directory, normalized; `INVALID_WORKDIR` otherwise. */
async function checkWorkdir(workdir: unknown): Promise<string> {
  if (typeof workdir !== 'string' || !isAbsolute(workdir)) {
    throw new EntityGitError(
      'INVALID_WORKDIR',
      `[sqlite] workdir must be an absolute path: ${JSON.stringify(workdir)}`,
      {
        workdir,
      },
    );
  }
  // No file system's path holds NUL, whatever the engine's text can.
  if (workdir.includes('\u0000'))
    throw new EntityGitError('INVALID_WORKDIR', '[sqlite] workdir holds NUL, which no path can', { workdir });
  assertStorableText(workdir, 'workdir', 'INVALID_WORKDIR', undefined);
  const normalized = resolve(workdir);
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(normalized)).isDirectory();
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    const why = code === 'ENOENT' || code === 'ENOTDIR' ? 'does not exist' : `cannot be read (${String(code ?? err)})`;
    throw new EntityGitError(
      'INVALID_WORKDIR',
      `[sqlite] workdir ${JSON.stringify(workdir)} ${why}`,
      { workdir },
      { cause: err },
    );
  }
  if (!isDirectory)
    throw new EntityGitError('INVALID_WORKDIR', `[sqlite] workdir ${JSON.stringify(workdir)} is not a directory`, {
      workdir,
    });
  return normalized;
}

function duplicateName(name: string): EntityGitError {
  return new EntityGitError('DUPLICATE_PROJECT', `[sqlite] a project named ${JSON.stringify(name)} exists already`, {
    name,
  });
}
