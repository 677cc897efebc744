import { EntityGitError } from '@entity-git/core';
import {
  UNCOMMITTED_CHANGES_WARNING,
  createProjectGit,
  projectCommitMessage,
  type ChangedPath,
  type CommitDone,
  type CommitRequest,
  type FileState,
  type ProjectGitEngine,
  type RepoState,
  type WorkdirState,
} from '@entity-git/project';
import { describe, expect, it } from 'vitest';

const REPO: RepoState = {
  root: '/p',
  prefix: '',
  gitdir: '/p/.git',
  commonDir: '/p/.git',
  linkedWorktree: false,
  branch: 'refs/heads/main',
  head: 'a'.repeat(40),
  operations: [],
  unsupported: null,
};

/** An engine over a scripted state, recording every call, for the decision logic alone. */
function fakeEngine(
  over: {
    state?: WorkdirState;
    changes?: ChangedPath[];
    commit?: (req: CommitRequest, n: number) => CommitDone | null;
  } = {},
) {
  const calls: string[] = [];
  const requests: CommitRequest[] = [];
  // Clean until the turn's edits are made: snapshots see nothing, afterTurn sees `over.changes`.
  let dirty: ChangedPath[] = [];
  let commits = 0;
  const engine: ProjectGitEngine = {
    name: 'fake',
    inspect: async (w) => {
      calls.push(`inspect ${w}`);
      return over.state ?? { kind: 'repository', repo: REPO };
    },
    status: async () => {
      calls.push('status');
      return dirty;
    },
    hashPaths: async (_r, paths) => paths.map((path): FileState => ({ path, oid: 'b'.repeat(40), mode: '100644' })),
    init: async (w) => {
      calls.push(`init ${w}`);
    },
    commit: async (_r, req) => {
      calls.push('commit');
      requests.push(req);
      commits++;
      return over.commit
        ? over.commit(req, commits)
        : {
            commit: 'c'.repeat(40),
            tree: 'd'.repeat(40),
            parent: REPO.head,
            branch: REPO.branch!,
            entries: req.paths.map((path) => ({ path, oid: 'b'.repeat(40), mode: '100644' })),
          };
    },
  };
  const edit = () => {
    dirty = over.changes ?? [];
  };
  return { engine, calls, requests, edit };
}

const change = (path: string, extra: Partial<ChangedPath> = {}): ChangedPath => ({
  path,
  staged: false,
  unstaged: true,
  untracked: false,
  conflicted: false,
  submodule: false,
  ...extra,
});
const turn = { workdir: '/p', sessionId: 's', turn: 2, userMessage: 'go', model: 'm', touchedPaths: ['a.txt'] };
const expectCode = (p: Promise<unknown>, code: string) =>
  expect(p).rejects.toMatchObject({ name: 'EntityGitError', code });

describe('createProjectGit: the decision alone, over a scripted engine', () => {
  it('validates its input with typed errors', async () => {
    const pg = createProjectGit({ engine: fakeEngine().engine });
    await expectCode(pg.afterTurn({ ...turn, workdir: 'relative/dir' }), 'INVALID_WORKDIR');
    await expectCode(pg.afterTurn({ ...turn, sessionId: '' }), 'INVALID_ID');
    await expectCode(pg.afterTurn({ ...turn, turn: 0 }), 'INVALID_OPTION');
    await expectCode(pg.afterTurn({ ...turn, turn: 1.5 }), 'INVALID_OPTION');
    await expectCode(pg.afterTurn({ ...turn, sessionCommit: 'not-a-sha' }), 'INVALID_OPTION');
    await expectCode(pg.afterTurn({ ...turn, touchedPaths: [42 as unknown as string] }), 'INVALID_OPTION');
    await expectCode(pg.afterTurn({ ...turn, snapshot: { version: 2 } as never }), 'INVALID_OPTION');
    const other = await pg.beforeTurn('/elsewhere');
    await expectCode(pg.afterTurn({ ...turn, snapshot: other }), 'INVALID_OPTION');
    await expectCode(pg.beforeTurn('nope'), 'INVALID_WORKDIR');
    expect(() => createProjectGit({ engine: fakeEngine().engine, committerEmail: 'a<b' })).toThrow(EntityGitError);
    expect(() => createProjectGit({ engine: fakeEngine().engine, author: { name: '', email: 'x@y' } })).toThrow(
      EntityGitError,
    );
    expect(() => createProjectGit({ engine: fakeEngine().engine, withoutSnapshot: 'guess' as never })).toThrow(
      EntityGitError,
    );
  });

  it('takes the lock on the repository root, and looks again inside it', async () => {
    const f = fakeEngine({ changes: [change('a.txt')] });
    const keys: string[] = [];
    const pg = createProjectGit({
      engine: f.engine,
      lock: async (key, fn) => {
        keys.push(key);
        f.calls.push('locked');
        return fn();
      },
    });
    const snap = await pg.beforeTurn('/p/sub/');
    expect(snap.workdir).toBe('/p/sub');
    await pg.afterTurn({ ...turn, snapshot: await pg.beforeTurn('/p').finally(f.edit) });
    expect(keys).toEqual(['/p', '/p', '/p']);
    expect(f.calls.slice(-5)).toEqual(['inspect /p', 'locked', 'inspect /p', 'status', 'commit']);
  });

  it('looks again and retries when the branch moves between the decision and the commit', async () => {
    const f = fakeEngine({
      changes: [change('a.txt')],
      commit: (_req, n) => {
        if (n === 1) throw new EntityGitError('REF_CONFLICT', 'moved');
        return {
          commit: 'e'.repeat(40),
          tree: 'd'.repeat(40),
          parent: null,
          branch: 'refs/heads/main',
          entries: [{ path: 'a.txt', oid: 'b'.repeat(40), mode: '100644' }],
        };
      },
    });
    const pg = createProjectGit({ engine: f.engine });
    const r = await pg.afterTurn({ ...turn, snapshot: await pg.beforeTurn('/p').finally(f.edit) });
    expect(r).toMatchObject({ status: 'committed', commit: 'e'.repeat(40) });
    expect(f.calls.filter((c) => c === 'status')).toHaveLength(3);
  });

  it('gives up after a few attempts when the branch keeps moving', async () => {
    const f = fakeEngine({
      changes: [change('a.txt')],
      commit: () => {
        throw new EntityGitError('REF_CONFLICT', 'moved');
      },
    });
    const pg = createProjectGit({ engine: f.engine });
    await expectCode(pg.afterTurn({ ...turn, snapshot: await pg.beforeTurn('/p').finally(f.edit) }), 'REF_CONFLICT');
    expect(f.calls.filter((c) => c === 'commit')).toHaveLength(4);
  });

  it('never inits or commits on a skip', async () => {
    const cases: Array<[WorkdirState, ChangedPath[], string]> = [
      [{ kind: 'missing' }, [], 'workdir-missing'],
      [{ kind: 'not-a-directory' }, [], 'workdir-not-a-directory'],
      [{ kind: 'bare', gitdir: '/p' }, [], 'bare-repository'],
      [{ kind: 'repository', repo: { ...REPO, unsupported: 'a split index' } }, [], 'unsupported-repository'],
      [{ kind: 'repository', repo: { ...REPO, operations: ['bisect', 'rebase'] } }, [], 'rebase-in-progress'],
      [{ kind: 'repository', repo: { ...REPO, operations: ['am'] } }, [], 'am-in-progress'],
      [{ kind: 'repository', repo: { ...REPO, branch: null } }, [], 'detached-head'],
      [{ kind: 'repository', repo: REPO }, [change('a.txt'), change('u.txt')], 'uncommitted-changes'],
      [{ kind: 'repository', repo: REPO }, [change('a.txt', { conflicted: true })], 'uncommitted-changes'],
      [{ kind: 'repository', repo: REPO }, [change('lib', { submodule: true })], 'uncommitted-changes'],
    ];
    for (const [state, changes, reason] of cases) {
      const f = fakeEngine({ state, changes });
      f.edit();
      const pg = createProjectGit({ engine: f.engine });
      const r = await pg.afterTurn({ ...turn, snapshot: null });
      expect(r).toMatchObject({ status: 'skipped', reason });
      if (reason === 'uncommitted-changes') expect(r).toMatchObject({ warning: UNCOMMITTED_CHANGES_WARNING });
      expect(f.calls.filter((c) => c === 'commit' || c.startsWith('init'))).toEqual([]);
    }
  });

  it('an edit inside a changed submodule is reported as such', async () => {
    const f = fakeEngine({ changes: [change('lib', { submodule: true })] });
    const pg = createProjectGit({ engine: f.engine });
    const r = await pg.afterTurn({
      ...turn,
      touchedPaths: ['lib/x.c'],
      snapshot: await pg.beforeTurn('/p').finally(f.edit),
    });
    expect(r).toMatchObject({
      status: 'skipped',
      reason: 'submodule-changes',
      warning: "the agent edited files inside the submodule lib, its edits won't be auto-committed",
    });
  });

  it('builds the commit: subject folded and cut at 60 code points, committer named for the model, author time of the turn', async () => {
    const f = fakeEngine({ changes: [change('a.txt')] });
    const pg = createProjectGit({
      engine: f.engine,
      now: () => 1_700_000_000_999,
      committerEmail: 'bot@example.com',
      product: 'Studio',
    });
    const userMessage = `${'x'.repeat(58)}😀😀😀 and more`;
    await pg.afterTurn({
      ...turn,
      userMessage,
      model: 'gpt <5>\nturbo',
      sessionCommit: 'f'.repeat(40),
      snapshot: await pg.beforeTurn('/p').finally(f.edit),
    });
    const req = f.requests[0]!;
    expect(req.message).toBe(
      `[agent s] turn 2: ${'x'.repeat(58)}😀😀\n\nSession: s\nTurn: 2\nSession-Commit: ${'f'.repeat(40)}\n`,
    );
    expect(req.committer).toEqual({
      name: 'agent (gpt 5 turbo via Studio)',
      email: 'bot@example.com',
      time: 1_700_000_000,
    });
    expect(req.author).toEqual(req.committer);
    expect(req.reflogMessage).toBe(`commit: [agent s] turn 2: ${'x'.repeat(58)}😀😀`);
    expect(req.paths).toEqual(['a.txt']);
  });

  it('escapes a hostile session id the way session repositories do, and drops an empty subject', () => {
    expect(projectCommitMessage('../evil\nid', 3, '', null)).toBe(
      '[agent %2E%2E%2Fevil%0Aid] turn 3\n\nSession: %2E%2E%2Fevil%0Aid\nTurn: 3\n',
    );
  });

  it('an author of the user’s choosing, the committer stays the agent', async () => {
    const f = fakeEngine({ changes: [change('a.txt')] });
    const pg = createProjectGit({
      engine: f.engine,
      author: { name: 'Ada', email: 'ada@example.com' },
      now: () => 5_000,
    });
    await pg.afterTurn({ ...turn, snapshot: await pg.beforeTurn('/p').finally(f.edit) });
    expect(f.requests[0]!.author).toEqual({ name: 'Ada', email: 'ada@example.com', time: 5 });
    expect(f.requests[0]!.committer.name).toBe('agent (m via OpenProgram)');
  });

  it('serializes calls on one repository within a process even without a lock', async () => {
    const order: string[] = [];
    const f = fakeEngine({
      changes: [change('a.txt')],
      commit: (req) => {
        order.push(`commit ${req.message.split('\n')[0]}`);
        return { commit: 'c'.repeat(40), tree: 'd'.repeat(40), parent: null, branch: 'refs/heads/main', entries: [] };
      },
    });
    const slow = {
      ...f.engine,
      status: async () => {
        order.push('status');
        await new Promise((r) => setTimeout(r, 10));
        return [change('a.txt')];
      },
    };
    const pg = createProjectGit({ engine: slow, withoutSnapshot: 'trust-touched' });
    await Promise.all([pg.afterTurn({ ...turn, turn: 1 }), pg.afterTurn({ ...turn, turn: 2 })]);
    expect(order).toEqual(['status', 'commit [agent s] turn 1: go', 'status', 'commit [agent s] turn 2: go']);
  });
});
