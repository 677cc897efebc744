import { describe, expect, it } from 'vitest';
import { SESSION_COMMIT, type SuiteContext } from './context.js';
import { revertContext, type RevertContext } from './revert-context.js';

const SUBJECT = 'Fix the parser: it drops the last token when a line ends in';

/** Undoing the agent's turn: the branch moved back over its commit when nothing of the user's is on it, else a revert commit. */
export function revertingTests(c: SuiteContext): void {
  const rc = revertContext(c);
  describe('undoing the agent’s turn', () => {
    resetTests(c, rc);
    revertCommitTests(c, rc);
    reportingTests(c, rc);
  });
}

/** The branch moved back over the agent’s commit: it is the tip, unpushed, and the tree is clean. */
function resetTests(c: SuiteContext, rc: RevertContext): void {
  const { j, untouched } = c;
  const { withAgentTurn, rev, expectClean } = rc;
  it('tip, unpushed, clean → the branch moves back over the agent commit (a reset of exactly its files); twice is a no-op', async () => {
    const { dir, pg, before, agent } = await withAgentTurn();
    const r = await pg.revertAgentTurn({ workdir: dir, sessionId: 'sess-1', turn: 7 });
    expect(r).toMatchObject({
      kind: 'reset',
      sessionId: 'sess-1',
      turn: 7,
      commit: agent,
      head: before,
      branch: 'refs/heads/main',
      paths: ['old.txt', 'src/main.ts', 'src/new/parser.ts'],
    });
    expect(await rev(dir, 'HEAD')).toBe(before);
    expect(await j.read(`${dir}/src/main.ts`)).toBe('export const x = 1;\n');
    expect(await j.read(`${dir}/old.txt`)).toBe('to be removed\n');
    expect(await j.exists(`${dir}/src/new`)).toBe(false);
    await expectClean(dir);
    // The reflog records the move, and the agent commit is still there to go back to.
    expect((await j.git(dir, 'reflog', '-1', '--format=%H %gs', 'main')).trim()).toBe(
      `${before} reset: undo of [agent sess-1] turn 7: ${SUBJECT}`,
    );
    expect(await j.git(dir, 'cat-file', '-t', agent)).toBe('commit\n');

    const again = await untouched(dir, () => pg.revertAgentTurn({ workdir: dir, sessionId: 'sess-1', turn: 7 }));
    expect(again).toMatchObject({ kind: 'already-reverted', by: 'reset', commit: agent, paths: [] });
    expect(
      await untouched(dir, () => pg.revertAgentTurn({ workdir: dir, sessionId: 'sess-1', commit: agent })),
    ).toMatchObject({
      kind: 'already-reverted',
      by: 'reset',
    });
  });
}

/** An additive revert commit: the agent’s commit is pushed, under a user’s, or the user has work in progress. */
function revertCommitTests(c: SuiteContext, rc: RevertContext): void {
  const { j, untouched } = c;
  const { withAgentTurn, rev, expectClean, expectedRevertCommit } = rc;
  it('pushed → an additive revert commit, attributed like the agent’s, with its message and trailers; twice is a no-op', async () => {
    const { dir, pg, before, agent } = await withAgentTurn();
    const remote = await j.tempDir();
    await j.git(remote, 'init', '-q', '--bare');
    await j.git(dir, 'remote', 'add', 'origin', remote);
    await j.git(dir, 'push', '-q', 'origin', 'main');
    const r = await pg.revertAgentTurn({ workdir: dir, sessionId: 'sess-1', turn: 7 });
    expect(r).toMatchObject({
      kind: 'reverted',
      commit: agent,
      paths: ['old.txt', 'src/main.ts', 'src/new/parser.ts'],
    });
    if (r.kind !== 'reverted') return;
    const message = `[agent sess-1] revert turn 7: ${SUBJECT}\n\nSession: sess-1\nTurn: 7\nSession-Commit: ${SESSION_COMMIT}\nReverts: ${agent}\n`;
    const expected = await expectedRevertCommit(dir, await rev(dir, `${before}^{tree}`), agent, message);
    expect(await j.git(dir, 'cat-file', 'commit', 'HEAD')).toBe(expected.text);
    expect(r.revertCommit).toBe(expected.id);
    expect(r.head).toBe(expected.id);
    expect(await rev(dir, 'HEAD')).toBe(expected.id);
    expect(await j.git(dir, 'diff', '--name-only', before, 'HEAD')).toBe('');
    expect((await j.git(dir, 'reflog', '-1', '--format=%gs', 'main')).trim()).toBe(
      `commit: [agent sess-1] revert turn 7: ${SUBJECT}`,
    );
    await expectClean(dir);
    // The remote is the user's to push to: nothing was sent.
    expect(await rev(remote, 'main')).toBe(agent);

    const again = await untouched(dir, () => pg.revertAgentTurn({ workdir: dir, sessionId: 'sess-1', turn: 7 }));
    expect(again).toMatchObject({ kind: 'already-reverted', by: 'revert', revertCommit: expected.id });
  });

  it('a later commit of the user’s on top → a revert commit after it; the user’s commit and files stay', async () => {
    const { dir, pg, before, agent } = await withAgentTurn();
    await j.write(`${dir}/user.txt`, 'the user’s\n');
    await j.git(dir, 'add', 'user.txt');
    await j.git(dir, 'commit', '-q', '-m', 'the user commits after the agent');
    const userCommit = await rev(dir, 'HEAD');
    const r = await pg.revertAgentTurn({ workdir: dir, sessionId: 'sess-1', commit: agent });
    expect(r).toMatchObject({ kind: 'reverted', commit: agent, turn: 7 });
    expect((await j.git(dir, 'log', '-1', '--format=%P')).trim()).toBe(userCommit);
    expect(await j.read(`${dir}/user.txt`)).toBe('the user’s\n');
    expect(await j.read(`${dir}/src/main.ts`)).toBe('export const x = 1;\n');
    expect(await j.exists(`${dir}/src/new/parser.ts`)).toBe(false);
    expect((await j.git(dir, 'diff', '--name-only', before, 'HEAD')).trim()).toBe('user.txt');
    await expectClean(dir);
  });

  it('uncommitted work elsewhere → a revert commit (never a reset), the user’s files and staging byte-identical', async () => {
    const { dir, pg, agent } = await withAgentTurn();
    await j.write(`${dir}/README.md`, '# staged by the user\n');
    await j.git(dir, 'add', 'README.md');
    await j.write(`${dir}/README.md`, '# then edited again\n');
    await j.write(`${dir}/notes.txt`, 'untracked, the user’s\n');
    const r = await pg.revertAgentTurn({ workdir: dir, sessionId: 'sess-1', turn: 7 });
    expect(r).toMatchObject({ kind: 'reverted', commit: agent });
    expect((await j.git(dir, 'log', '-1', '--format=%P')).trim()).toBe(agent);
    expect(await j.read(`${dir}/README.md`)).toBe('# then edited again\n');
    expect(await j.read(`${dir}/notes.txt`)).toBe('untracked, the user’s\n');
    expect(await j.git(dir, 'show', ':README.md')).toBe('# staged by the user\n');
    expect(await c.porcelain(dir)).toBe('MM README.md\n?? notes.txt\n');
    expect(await j.git(dir, 'fsck', '--strict')).toBe('');
  });
}

/** What an undo tells: the logger’s events, and the session’s agent commits with how each was undone. */
function reportingTests(c: SuiteContext, rc: RevertContext): void {
  const { j, repo, projectGit, untouched } = c;
  const { agentTurn, withAgentTurn, rev } = rc;
  it('reports each undo to the logger: done, or refused with its code and reason', async () => {
    const events: Array<[string, string, Record<string, unknown>]> = [];
    const log = (level: string) => (event: string, fields: Record<string, unknown>) => {
      if (event.startsWith('project.revert')) events.push([level, event, fields]);
    };
    const logger = { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
    const { dir, pg, agent } = await withAgentTurn({}, { logger });
    await j.write(`${dir}/src/main.ts`, 'the user is typing\n');
    await expect(pg.revertAgentTurn({ workdir: dir, sessionId: 'sess-1', turn: 7 })).rejects.toMatchObject({
      code: 'REVERT_REFUSED',
    });
    await j.git(dir, 'checkout', '--', 'src/main.ts');
    await pg.revertAgentTurn({ workdir: dir, sessionId: 'sess-1', turn: 7 });
    expect(events.map(([level, event]) => `${level} ${event}`)).toEqual([
      'warn project.revert.refused',
      'info project.revert',
    ]);
    expect(events[0]![2]).toMatchObject({ workdir: dir, code: 'REVERT_REFUSED', reason: 'uncommitted-changes' });
    expect(events[1]![2]).toMatchObject({
      workdir: dir,
      sessionId: 'sess-1',
      turn: 7,
      kind: 'reset',
      commit: agent,
      paths: 3,
    });
  });

  it('lists the session’s agent commits and how each was undone', async () => {
    const dir = await repo();
    const pg = projectGit();
    const one = await agentTurn(pg, dir, { 'a.txt': 'one\n' }, 1);
    const two = await agentTurn(pg, dir, { 'b.txt': 'two\n' }, 2);
    await agentTurn(pg, dir, { 'c.txt': 'other\n' }, 1, 'sess-2');
    const three = await agentTurn(pg, dir, { 'd.txt': 'three\n' }, 3);
    expect(await pg.revertAgentTurn({ workdir: dir, sessionId: 'sess-1', turn: 2 })).toMatchObject({
      kind: 'reverted',
    });
    const reverting = await rev(dir, 'HEAD');
    expect(await pg.revertAgentTurn({ workdir: dir, sessionId: 'sess-1', turn: 3 })).toMatchObject({
      kind: 'reverted',
    });
    const listed = await untouched(dir, () => pg.agentCommits({ workdir: dir, sessionId: 'sess-1' }));
    expect(listed.branch).toBe('refs/heads/main');
    expect(listed.commits.map((x) => [x.turn, x.commit, x.undone])).toEqual([
      [3, three, { by: 'revert', revertCommit: await rev(dir, 'HEAD') }],
      [2, two, { by: 'revert', revertCommit: reverting }],
      [1, one, null],
    ]);
    expect(listed.commits[0]).toMatchObject({ subject: SUBJECT, sessionCommit: SESSION_COMMIT });
    // A reset leaves the commit off the branch: the reflog still lists it, as undone.
    const fresh = await withAgentTurn();
    await fresh.pg.revertAgentTurn({ workdir: fresh.dir, sessionId: 'sess-1', turn: 7 });
    expect((await fresh.pg.agentCommits({ workdir: fresh.dir, sessionId: 'sess-1' })).commits).toEqual([
      { commit: fresh.agent, turn: 7, subject: SUBJECT, sessionCommit: SESSION_COMMIT, undone: { by: 'reset' } },
    ]);
  });
}
