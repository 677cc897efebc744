import { createActions, EntityGitError, MemoryDag, type ProjectStore } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { GOLDEN_SESSION, writeGolden } from '@entity-git/test-utils';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { git, patched, tempDir } from '../../packages/node-fs/test/helpers.js';

const SID = GOLDEN_SESSION.id;
const TURN1 = '4b1cc3d267e0d1e614cf1f5670401133cff1ac7f';
const FORK_U4 = '17a4c695c75333ca3ac7710e31cd26d953bab6d6';

async function golden() {
  const dag = new MemoryDag({ now: () => 1779600000 });
  await writeGolden(dag);
  const mirror = createNodeMirror({ dag, root: tempDir() });
  await mirror.sync(SID);
  return { dag, mirror, dir: mirror.repoPath(SID) };
}

const headBranch = (dir: string) => git(dir, 'symbolic-ref', '--short', 'HEAD').trim();

describe('actions: the generic fallback for errors that are not EntityGitErrors', () => {
  it('a plain Error from the mirror comes back through handle as STORAGE_ERROR with its message', async () => {
    const { dag, mirror } = await golden();
    const broken = patched(mirror, {
      branches: async () => {
        throw new Error('disk on fire');
      },
      read: async () => {
        throw new TypeError('cannot read properties of undefined');
      },
    });
    const actions = createActions({ dag, mirror: broken, writer: dag, projects: dag });
    expect(await actions.handle({ id: 1, action: 'git_branches', params: { session_id: SID } })).toEqual({
      id: 1,
      ok: false,
      error: { code: 'STORAGE_ERROR', message: '[entity-git] disk on fire' },
    });
    expect(await actions.handle({ action: 'git_checkout', params: { session_id: SID, commit_sha: TURN1 } })).toEqual({
      ok: false,
      error: { code: 'STORAGE_ERROR', message: '[entity-git] cannot read properties of undefined' },
    });
    // Called directly, the handler does not disguise it: the plain error propagates as is.
    const direct = await actions.git_branches({ session_id: SID }).catch((e: unknown) => e);
    expect(direct).toBeInstanceOf(Error);
    expect(direct).not.toBeInstanceOf(EntityGitError);
    expect((direct as Error).message).toBe('disk on fire');
  });

  it('a non-Error throw (a string) also becomes STORAGE_ERROR, never a throw out of handle', async () => {
    const { dag, mirror } = await golden();
    const broken = patched(mirror, {
      branches: async () => {
        throw 'EIO'; // eslint-disable-line no-throw-literal
      },
    });
    const actions = createActions({ dag, mirror: broken, writer: dag });
    expect(await actions.handle({ action: 'git_branches', params: { session_id: SID } })).toEqual({
      ok: false,
      error: { code: 'STORAGE_ERROR', message: '[entity-git] EIO' },
    });
  });

  it('an EntityGitError from the mirror keeps its own code', async () => {
    const { dag, mirror } = await golden();
    const broken = patched(mirror, {
      branches: async () => {
        throw new EntityGitError('LOCK_TIMEOUT', 'held elsewhere');
      },
    });
    const actions = createActions({ dag, mirror: broken, writer: dag });
    expect(await actions.handle({ action: 'git_branches', params: { session_id: SID } })).toEqual({
      ok: false,
      error: { code: 'LOCK_TIMEOUT', message: '[entity-git] held elsewhere' },
    });
  });
});

describe('actions: git_switch_branch without a DAG writer', () => {
  it('is INVALID_ARGUMENT and moves neither the DAG head nor HEAD', async () => {
    const { dag, mirror, dir } = await golden();
    const actions = createActions({ dag, mirror, projects: dag });
    const r = await actions.handle({ action: 'git_switch_branch', params: { session_id: SID, branch: 'retry-a4r' } });
    expect(r).toMatchObject({ ok: false, error: { code: 'INVALID_ARGUMENT' } });
    expect(r.ok ? '' : r.error.message).toMatch(/writer/);
    await expect(actions.git_switch_branch({ session_id: SID, branch: 'retry-a4r' })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    expect(await dag.getHead(SID)).toBe('a7');
    expect(headBranch(dir)).toBe('fork-u4');
    expect(git(dir, 'rev-parse', 'HEAD').trim()).toBe(FORK_U4);
    // Reading still works without a writer.
    expect(await actions.handle({ action: 'git_branches', params: { session_id: SID } })).toMatchObject({ ok: true });
  });
});

describe('actions: INVALID_PROJECT', () => {
  // MemoryDag refuses nothing that create_project's own validation lets through (a blank or
  // non-string name is INVALID_ARGUMENT at the edge), so INVALID_PROJECT comes from a store that
  // refuses more: here one that, like the SQL store, cannot keep a name holding a lone surrogate.
  function strictProjects(inner: MemoryDag): ProjectStore {
    return {
      createProject: async (input) => {
        if (/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(input.name)) {
          throw new EntityGitError('INVALID_PROJECT', 'project name holds a lone surrogate');
        }
        return inner.createProject(input);
      },
      listProjects: () => inner.listProjects(),
      getProject: (id) => inner.getProject(id),
      setProjectStatus: (id, s) => inner.setProjectStatus(id, s),
      addSessionToProject: (p, s) => inner.addSessionToProject(p, s),
      sessionsOfProject: (p) => inner.sessionsOfProject(p),
      projectOfSession: (s) => inner.projectOfSession(s),
    };
  }

  it("a project the store refuses comes back as the store's INVALID_PROJECT, and nothing is created", async () => {
    const { dag, mirror } = await golden();
    const actions = createActions({ dag, mirror, writer: dag, projects: strictProjects(dag) });
    const workdir = tempDir();
    expect(
      await actions.handle({ action: 'create_project', params: { name: 'p\ud800', workdir, session_id: SID } }),
    ).toMatchObject({ ok: false, error: { code: 'INVALID_PROJECT' } });
    expect(await dag.listProjects()).toEqual([]);
    expect((await dag.getSession(SID))!.project_id).toBeNull();
    // The same store takes a well-formed name (a surrogate pair is fine).
    expect(
      await actions.handle({ action: 'create_project', params: { name: 'p\ud83d\ude00', workdir } }),
    ).toMatchObject({ ok: true, result: { name: 'p😀' } });
  });

  it('a blank name is refused at the edge as INVALID_ARGUMENT before any store sees it', async () => {
    const { dag, mirror } = await golden();
    const actions = createActions({ dag, mirror, projects: dag });
    for (const name of ['   ', '\t\n', 7, null]) {
      expect(await actions.handle({ action: 'create_project', params: { name, workdir: tempDir() } })).toMatchObject({
        ok: false,
        error: { code: 'INVALID_ARGUMENT' },
      });
    }
    expect(await dag.listProjects()).toEqual([]);
  });
});

describe('actions: BRANCH_NOT_FOUND for a branch with no mirrored turn', () => {
  it('a retry whose only turn is still pending has no branch yet: BRANCH_NOT_FOUND, head unchanged', async () => {
    const { dag, mirror, dir } = await golden();
    // A retry of turn 1's reply, still being generated: its branch has no complete turn.
    await dag.appendNode({
      id: 'a2r',
      session_id: SID,
      role: 'assistant',
      content: '',
      predecessor: 't2',
      metadata: { pending: true },
    });
    await mirror.sync(SID);
    expect((await mirror.branches(SID)).map((b) => b.name)).not.toContain('retry-a2r');
    const actions = createActions({ dag, mirror, writer: dag });
    expect(
      await actions.handle({ action: 'git_switch_branch', params: { session_id: SID, branch: 'retry-a2r' } }),
    ).toMatchObject({ ok: false, error: { code: 'BRANCH_NOT_FOUND' } });
    expect(
      await actions.handle({ action: 'git_history', params: { session_id: SID, branch: 'retry-a2r' } }),
    ).toMatchObject({ ok: false, error: { code: 'BRANCH_NOT_FOUND' } });
    expect(await dag.getHead(SID)).toBe('a7');
    expect(headBranch(dir)).toBe('fork-u4');

    // Once the reply is complete the branch exists and the switch succeeds.
    await dag.fillNode(SID, 'a2r', 'Two files.', null);
    await mirror.sync(SID);
    expect(
      await actions.handle({ action: 'git_switch_branch', params: { session_id: SID, branch: 'retry-a2r' } }),
    ).toMatchObject({ ok: true, result: { head_node: 'a2r' } });
    expect(headBranch(dir)).toBe('retry-a2r');
  });

  it('a branch whose tip carries no entity-git trailers (made with native git): BRANCH_NOT_FOUND, head unchanged', async () => {
    const { dag, mirror, dir } = await golden();
    const tree = git(dir, 'rev-parse', `${TURN1}^{tree}`).trim();
    const sha = execFileSync('git', ['commit-tree', tree, '-m', 'hand-made commit'], {
      cwd: dir,
      encoding: 'utf8',
      env: {
        ...process.env,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_AUTHOR_NAME: 'u',
        GIT_AUTHOR_EMAIL: 'u@example.com',
        GIT_COMMITTER_NAME: 'u',
        GIT_COMMITTER_EMAIL: 'u@example.com',
      },
    }).trim();
    git(dir, 'update-ref', 'refs/heads/manual', sha);
    expect((await mirror.branches(SID)).find((b) => b.name === 'manual')).toMatchObject({ commit: sha, turns: 0 });

    const actions = createActions({ dag, mirror, writer: dag });
    const r = await actions.handle({ action: 'git_switch_branch', params: { session_id: SID, branch: 'manual' } });
    expect(r).toMatchObject({ ok: false, error: { code: 'BRANCH_NOT_FOUND' } });
    expect(r.ok ? '' : r.error.message).toMatch(/no mirrored turn/);
    expect(await dag.getHead(SID)).toBe('a7');
    expect(headBranch(dir)).toBe('fork-u4');
  });
});
