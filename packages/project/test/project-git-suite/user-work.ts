import { UNCOMMITTED_CHANGES_WARNING } from '@entity-git/project';
import { gitBlobId } from '@entity-git/git';
import { describe, expect, it } from 'vitest';
import type { SuiteContext } from './context.js';

/** The user’s uncommitted work blocks the commit, and nothing of theirs is touched. */
export function userWorkTests(c: SuiteContext): void {
  describe('the user’s uncommitted work blocks the commit, and nothing of theirs is touched', () => {
    userEditTests(c);
    writtenBlobTests(c);
    stagingAndSnapshotTests(c);
    pendingEditTests(c);
  });
}

/** The user’s edits before or during the turn, on other paths or on the agent’s. */
function userEditTests(c: SuiteContext): void {
  const { j, projectGit, repo, input, count, untouched } = c;
  it('user edits before the turn', async () => {
    const dir = await repo();
    await j.write(`${dir}/README.md`, '# the user is typing\n');
    const pg = projectGit();
    const snap = await pg.beforeTurn(dir);
    expect(snap.dirty).toEqual(['README.md']);
    await j.write(`${dir}/src/agent.ts`, 'agent\n');
    const r = await untouched(dir, () => pg.afterTurn(input(dir, ['src/agent.ts'], snap)));
    expect(r).toMatchObject({
      status: 'skipped',
      reason: 'uncommitted-changes',
      warning: UNCOMMITTED_CHANGES_WARNING,
      userPaths: ['README.md'],
      agentPaths: ['src/agent.ts'],
    });
    expect(await count(dir)).toBe(1);
  });

  it('user edits during the turn on another path', async () => {
    const dir = await repo();
    const pg = projectGit();
    const snap = await pg.beforeTurn(dir);
    await j.write(`${dir}/src/agent.ts`, 'agent\n');
    await j.write(`${dir}/src/main.ts`, 'export const x = 99; // the user, mid-turn\n');
    await j.write(`${dir}/scratch.txt`, 'untracked, the user’s\n');
    const r = await untouched(dir, () => pg.afterTurn(input(dir, ['src/agent.ts'], snap)));
    expect(r).toMatchObject({
      status: 'skipped',
      reason: 'uncommitted-changes',
      warning: UNCOMMITTED_CHANGES_WARNING,
      userPaths: ['scratch.txt', 'src/main.ts'],
    });
  });

  it('user edits on the same path the agent touched', async () => {
    const dir = await repo();
    await j.write(`${dir}/src/main.ts`, 'export const x = 1; // user note\n');
    const pg = projectGit();
    const snap = await pg.beforeTurn(dir);
    await j.write(`${dir}/src/main.ts`, 'export const x = 1; // user note\nexport const y = 2; // agent\n');
    const r = await untouched(dir, () => pg.afterTurn(input(dir, ['src/main.ts'], snap)));
    expect(r).toMatchObject({
      status: 'skipped',
      reason: 'uncommitted-changes',
      warning: UNCOMMITTED_CHANGES_WARNING,
      userPaths: ['src/main.ts'],
      agentPaths: [],
    });
  });
}

/** `writtenBlobs`: what the agent wrote tells its bytes from the user’s on the same path. */
function writtenBlobTests(c: SuiteContext): void {
  const { j, projectGit, repo, input, untouched } = c;
  it('the user edits, during the turn, the very file the agent wrote: with writtenBlobs it is theirs and blocks', async () => {
    const dir = await repo();
    const pg = projectGit();
    const snap = await pg.beforeTurn(dir);
    const agentBytes = 'export const x = 1;\nexport const y = 2; // agent\n';
    await j.write(`${dir}/src/main.ts`, agentBytes);
    await j.write(`${dir}/src/main.ts`, `${agentBytes}// the user, mid-turn\n`);
    const r = await untouched(dir, () =>
      pg.afterTurn(input(dir, ['src/main.ts'], snap, { writtenBlobs: { 'src/main.ts': gitBlobId(agentBytes) } })),
    );
    expect(r).toMatchObject({
      status: 'skipped',
      reason: 'uncommitted-changes',
      warning: UNCOMMITTED_CHANGES_WARNING,
      userPaths: ['src/main.ts'],
      agentPaths: [],
    });
  });

  it('writtenBlobs that match: the files commit (a removed one as removed), reported by absolute or relative path', async () => {
    const dir = await repo();
    const pg = projectGit();
    const snap = await pg.beforeTurn(dir);
    const agentBytes = 'export const x = 2; // agent\n';
    await j.write(`${dir}/src/main.ts`, agentBytes);
    await j.remove(`${dir}/README.md`);
    const r = await pg.afterTurn(
      input(dir, ['src/main.ts', 'README.md'], snap, {
        writtenBlobs: { [`${dir}/src/main.ts`]: gitBlobId(agentBytes), 'README.md': null },
      }),
    );
    expect(r).toMatchObject({ status: 'committed', paths: ['README.md', 'src/main.ts'] });
    expect(await j.git(dir, 'show', 'HEAD:src/main.ts')).toBe(agentBytes);
    expect(await j.git(dir, 'status', '--porcelain')).toBe('');
    await expect(pg.afterTurn(input(dir, ['a'], snap, { writtenBlobs: { a: 'not an id' } }))).rejects.toMatchObject({
      code: 'INVALID_OPTION',
    });
  });
}

/** Work the user staged or made outside the workdir, and a turn without a snapshot. */
function stagingAndSnapshotTests(c: SuiteContext): void {
  const { j, projectGit, repo, input, untouched } = c;
  it('changes the user staged', async () => {
    const dir = await repo();
    await j.write(`${dir}/staged.txt`, 'staged by the user\n');
    await j.git(dir, 'add', 'staged.txt');
    const pg = projectGit();
    const snap = await pg.beforeTurn(dir);
    await j.write(`${dir}/a.txt`, 'agent\n');
    const r = await untouched(dir, () => pg.afterTurn(input(dir, ['a.txt'], snap)));
    expect(r).toMatchObject({ reason: 'uncommitted-changes', userPaths: ['staged.txt'] });
    expect(await j.git(dir, 'diff', '--cached', '--name-only')).toBe('staged.txt\n');
  });

  it('a user change outside the workdir, elsewhere in the repository', async () => {
    const dir = await repo({ 'web/index.html': '<p>\n', 'api/server.ts': 's\n' });
    await j.write(`${dir}/api/server.ts`, 's2\n');
    const pg = projectGit();
    const snap = await pg.beforeTurn(`${dir}/web`);
    await j.write(`${dir}/web/index.html`, '<p>agent</p>\n');
    const r = await untouched(dir, () => pg.afterTurn(input(`${dir}/web`, ['index.html'], snap)));
    expect(r).toMatchObject({
      reason: 'uncommitted-changes',
      userPaths: ['api/server.ts'],
      agentPaths: ['web/index.html'],
    });
  });

  it('without a snapshot: skips by default, commits with withoutSnapshot: trust-touched, and a foreign change blocks either way', async () => {
    const dir = await repo();
    await j.write(`${dir}/a.txt`, 'agent\n');
    const r = await untouched(dir, () => projectGit().afterTurn(input(dir, ['a.txt'], null)));
    expect(r).toMatchObject({ status: 'skipped', reason: 'no-snapshot', agentPaths: ['a.txt'] });
    await j.write(`${dir}/user.txt`, 'user\n');
    const blocked = await untouched(dir, () =>
      projectGit({ withoutSnapshot: 'trust-touched' }).afterTurn(input(dir, ['a.txt'], null)),
    );
    expect(blocked).toMatchObject({ reason: 'uncommitted-changes', userPaths: ['user.txt'] });
    await j.remove(`${dir}/user.txt`);
    expect(await projectGit({ withoutSnapshot: 'trust-touched' }).afterTurn(input(dir, ['a.txt'], null))).toMatchObject(
      { status: 'committed', paths: ['a.txt'] },
    );
  });
}

/** Pending edits: another session’s unfinished turn, committed when it ends unless the user changed them. */
function pendingEditTests(c: SuiteContext): void {
  const { j, projectGit, repo, input, names, count, porcelain, untouched } = c;
  it('pending edits: a turn blocked by another session’s unfinished edits lands when that session’s turn ends', async () => {
    const dir = await repo();
    const pg = projectGit();
    const [snapA, snapB] = [await pg.beforeTurn(dir), await pg.beforeTurn(dir)];
    await j.write(`${dir}/a.txt`, 'session A\n');
    await j.write(`${dir}/b.txt`, 'session B\n');
    const a = await untouched(dir, () =>
      pg.afterTurn(input(dir, ['a.txt'], snapA, { sessionId: 'A', turn: 3, userMessage: 'do a' })),
    );
    expect(a).toMatchObject({
      status: 'skipped',
      reason: 'uncommitted-changes',
      userPaths: ['b.txt'],
      agentPaths: ['a.txt'],
    });
    const b = await pg.afterTurn(input(dir, ['b.txt'], snapB, { sessionId: 'B', turn: 5, userMessage: 'do b' }));
    expect(b).toMatchObject({
      status: 'committed',
      sessionId: 'B',
      turn: 5,
      paths: ['b.txt'],
      deferred: [{ sessionId: 'A', turn: 3, paths: ['a.txt'] }],
    });
    expect((await j.git(dir, 'log', '--format=%s', '-2')).trim().split('\n')).toEqual([
      '[agent B] turn 5: do b',
      '[agent A] turn 3: do a',
    ]);
    expect(await names(dir, 'HEAD')).toEqual(['b.txt']);
    expect(await names(dir, 'HEAD~1')).toEqual(['a.txt']);
    expect(await porcelain(dir)).toBe('');
  });

  it('pending edits: a pending file the user changed afterwards is theirs, and is never committed', async () => {
    const dir = await repo();
    const pg = projectGit();
    const [snapA, snapB] = [await pg.beforeTurn(dir), await pg.beforeTurn(dir)];
    await j.write(`${dir}/a.txt`, 'session A\n');
    await j.write(`${dir}/b.txt`, 'session B\n');
    expect(await pg.afterTurn(input(dir, ['a.txt'], snapA, { sessionId: 'A' }))).toMatchObject({
      reason: 'uncommitted-changes',
    });
    await j.write(`${dir}/a.txt`, 'session A\nand the user\n');
    const b = await untouched(dir, () => pg.afterTurn(input(dir, ['b.txt'], snapB, { sessionId: 'B' })));
    expect(b).toMatchObject({
      status: 'skipped',
      reason: 'uncommitted-changes',
      userPaths: ['a.txt'],
      agentPaths: ['b.txt'],
    });
    expect(await count(dir)).toBe(1);
  });
}
