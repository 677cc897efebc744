import type { DagWriter, Project, ProjectStatus, ProjectStore } from '@entity-git/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/** A fresh, empty project store for one test, with a writer for its sessions. */
export interface ProjectStoreFixture {
  store: ProjectStore;
  /** Creates the sessions the tests add to projects (the same database as `store`). */
  writer: DagWriter;
  /** At least three absolute paths of existing directories (the suite has no filesystem of its own). */
  workdirs: string[];
  /** An absolute path where nothing exists. Given only by stores that check the filesystem. */
  missingWorkdir?: string;
  /** An absolute path of a regular file. Given only by stores that check the filesystem. */
  fileWorkdir?: string;
  cleanup?: () => unknown;
}

export interface ProjectStoreSuiteOptions {
  /** Shown in the suite's title. */
  name: string;
  /** Called before every test; the store must be empty. */
  create: () => Promise<ProjectStoreFixture>;
}

const T0 = 1_700_000_000;

/** The fixture's first three workdirs. */
type Workdirs = [string, string, string];

async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  await expect(promise).rejects.toMatchObject({ name: 'EntityGitError', code });
}

/** The contract of core's {@link ProjectStore}, run against one implementation. */
export function testProjectStore(options: ProjectStoreSuiteOptions): void {
  describe(`ProjectStore conformance: ${options.name}`, () => {
    let f: ProjectStoreFixture;
    // Filled in place before each test, so the parts below read the current test's workdirs.
    const dirs: Workdirs = ['', '', ''];
    beforeEach(async () => {
      f = await options.create();
      if (f.workdirs.length < 3) throw new Error('the fixture must give three workdirs');
      [dirs[0], dirs[1], dirs[2]] = [f.workdirs[0]!, f.workdirs[1]!, f.workdirs[2]!];
    });
    afterEach(async () => {
      await f?.cleanup?.();
    });

    // The parts see the current test's fixture through this view (each test gets a new one).
    const current: ProjectStoreFixture = {
      get store() {
        return f.store;
      },
      get writer() {
        return f.writer;
      },
      get workdirs() {
        return f.workdirs;
      },
      get missingWorkdir() {
        return f.missingWorkdir;
      },
      get fileWorkdir() {
        return f.fileWorkdir;
      },
    };

    creatingTests(current, dirs);
    refusedTests(current, dirs);
    statusTests(current, dirs);
    sessionTests(current, dirs);
  });
}

/** Creating projects and reading them back. */
function creatingTests(f: ProjectStoreFixture, dirs: Workdirs): void {
  describe('creating and reading', () => {
    it('createProject makes an active project with no sessions, and getProject returns it', async () => {
      const p = await f.store.createProject({ name: 'Parser', workdir: dirs[0] });
      expect(p).toEqual({
        id: expect.any(String),
        name: 'Parser',
        workdir: dirs[0],
        status: 'active',
        description: null,
        created_at: expect.any(Number),
        sessions: [],
      });
      expect(p.id.length).toBeGreaterThan(0);
      expect(await f.store.getProject(p.id)).toEqual(p);
    });

    it('keeps a given id and description', async () => {
      const p = await f.store.createProject({
        id: 'proj-1',
        name: 'Docs 📚',
        workdir: dirs[1],
        description: 'The manual, in two languages',
      });
      expect(p).toMatchObject({ id: 'proj-1', name: 'Docs 📚', description: 'The manual, in two languages' });
      expect(await f.store.getProject('proj-1')).toEqual(p);
    });

    it('generated ids differ', async () => {
      const a = await f.store.createProject({ name: 'A', workdir: dirs[0] });
      const b = await f.store.createProject({ name: 'B', workdir: dirs[0] });
      expect(a.id).not.toBe(b.id);
    });

    it('getProject of an unknown id is null', async () => {
      expect(await f.store.getProject('nope')).toBeNull();
    });

    it('listProjects gives every project, oldest first', async () => {
      expect(await f.store.listProjects()).toEqual([]);
      const made: Project[] = [];
      for (const name of ['zeta', 'alpha', 'mid']) made.push(await f.store.createProject({ name, workdir: dirs[0] }));
      expect((await f.store.listProjects()).map((p) => p.name)).toEqual(['zeta', 'alpha', 'mid']);
      expect(await f.store.listProjects()).toEqual(made);
    });
  });
}

/** Projects refused with a typed error, and nothing stored. */
function refusedTests(f: ProjectStoreFixture, dirs: Workdirs): void {
  describe('refused projects', () => {
    it('a name already used is DUPLICATE_PROJECT, and only the first exists', async () => {
      await f.store.createProject({ name: 'Same', workdir: dirs[0] });
      await expectCode(f.store.createProject({ name: 'Same', workdir: dirs[1] }), 'DUPLICATE_PROJECT');
      expect((await f.store.listProjects()).map((p) => [p.name, p.workdir])).toEqual([['Same', dirs[0]]]);
    });

    it('an empty or blank name is INVALID_PROJECT', async () => {
      await expectCode(f.store.createProject({ name: '', workdir: dirs[0] }), 'INVALID_PROJECT');
      await expectCode(f.store.createProject({ name: '   ', workdir: dirs[0] }), 'INVALID_PROJECT');
      await expectCode(f.store.createProject({ name: 7 as unknown as string, workdir: dirs[0] }), 'INVALID_PROJECT');
      expect(await f.store.listProjects()).toEqual([]);
    });

    it('a relative or non-string workdir is INVALID_WORKDIR', async () => {
      await expectCode(f.store.createProject({ name: 'R', workdir: 'relative/dir' }), 'INVALID_WORKDIR');
      await expectCode(f.store.createProject({ name: 'R', workdir: './here' }), 'INVALID_WORKDIR');
      await expectCode(f.store.createProject({ name: 'R', workdir: '' }), 'INVALID_WORKDIR');
      await expectCode(f.store.createProject({ name: 'R', workdir: null as unknown as string }), 'INVALID_WORKDIR');
      expect(await f.store.listProjects()).toEqual([]);
    });

    it('a missing workdir, or one that is a file, is INVALID_WORKDIR (stores that see a filesystem)', async (ctx) => {
      if (f.missingWorkdir === undefined && f.fileWorkdir === undefined) ctx.skip();
      if (f.missingWorkdir !== undefined)
        await expectCode(f.store.createProject({ name: 'M', workdir: f.missingWorkdir }), 'INVALID_WORKDIR');
      if (f.fileWorkdir !== undefined)
        await expectCode(f.store.createProject({ name: 'F', workdir: f.fileWorkdir }), 'INVALID_WORKDIR');
      expect(await f.store.listProjects()).toEqual([]);
    });
  });
}

/** A project's status. */
function statusTests(f: ProjectStoreFixture, dirs: Workdirs): void {
  describe('status', () => {
    it('setProjectStatus changes it, returns the project, and the change is kept', async () => {
      const p = await f.store.createProject({ name: 'S', workdir: dirs[0] });
      for (const status of ['paused', 'done', 'active'] as ProjectStatus[]) {
        expect(await f.store.setProjectStatus(p.id, status)).toEqual({ ...p, status });
        expect((await f.store.getProject(p.id))!.status).toBe(status);
      }
    });

    it('an unknown status is INVALID_PROJECT; an unknown project is PROJECT_NOT_FOUND', async () => {
      const p = await f.store.createProject({ name: 'S', workdir: dirs[0] });
      await expectCode(f.store.setProjectStatus(p.id, 'archived' as ProjectStatus), 'INVALID_PROJECT');
      await expectCode(f.store.setProjectStatus('nope', 'done'), 'PROJECT_NOT_FOUND');
      expect((await f.store.getProject(p.id))!.status).toBe('active');
    });
  });
}

/** Which session is in which project. */
function sessionTests(f: ProjectStoreFixture, dirs: Workdirs): void {
  describe('sessions of projects', () => {
    it('addSessionToProject binds sessions; the project, its session list and projectOfSession agree', async () => {
      const p = await f.store.createProject({ name: 'P', workdir: dirs[0] });
      for (const [i, id] of ['s-late', 's-early', 's-loose'].entries())
        await f.writer.createSession({ id, created_at: T0 + i });
      await f.store.addSessionToProject(p.id, 's-early');
      await f.store.addSessionToProject(p.id, 's-late');
      expect(await f.store.sessionsOfProject(p.id)).toEqual(['s-late', 's-early']);
      expect((await f.store.getProject(p.id))!.sessions).toEqual(['s-late', 's-early']);
      expect((await f.store.listProjects())[0]!.sessions).toEqual(['s-late', 's-early']);
      expect(await f.store.projectOfSession('s-early')).toEqual({ ...p, sessions: ['s-late', 's-early'] });
      expect(await f.store.projectOfSession('s-loose')).toBeNull();
    });

    it('adding a session twice is harmless; adding it to another project moves it', async () => {
      const a = await f.store.createProject({ name: 'A', workdir: dirs[0] });
      const b = await f.store.createProject({ name: 'B', workdir: dirs[1] });
      await f.writer.createSession({ id: 's' });
      await f.store.addSessionToProject(a.id, 's');
      await f.store.addSessionToProject(a.id, 's');
      expect(await f.store.sessionsOfProject(a.id)).toEqual(['s']);
      await f.store.addSessionToProject(b.id, 's');
      expect(await f.store.sessionsOfProject(a.id)).toEqual([]);
      expect(await f.store.sessionsOfProject(b.id)).toEqual(['s']);
      expect((await f.store.projectOfSession('s'))!.id).toBe(b.id);
    });

    it('a session created with a project_id belongs to it', async () => {
      const p = await f.store.createProject({ name: 'P', workdir: dirs[2] });
      await f.writer.createSession({ id: 'born-in', project_id: p.id });
      expect(await f.store.sessionsOfProject(p.id)).toEqual(['born-in']);
      expect((await f.store.projectOfSession('born-in'))!.id).toBe(p.id);
    });

    it('unknown projects and sessions are PROJECT_NOT_FOUND and SESSION_NOT_FOUND', async () => {
      const p = await f.store.createProject({ name: 'P', workdir: dirs[0] });
      await f.writer.createSession({ id: 's' });
      await expectCode(f.store.addSessionToProject('nope', 's'), 'PROJECT_NOT_FOUND');
      await expectCode(f.store.addSessionToProject(p.id, 'nope'), 'SESSION_NOT_FOUND');
      await expectCode(f.store.sessionsOfProject('nope'), 'PROJECT_NOT_FOUND');
      await expectCode(f.store.projectOfSession('nope'), 'SESSION_NOT_FOUND');
      expect(await f.store.projectOfSession('s')).toBeNull();
      expect(await f.store.sessionsOfProject(p.id)).toEqual([]);
    });
  });
}
