// The undo's pure parts: recognising the agent's own commits by their message and committer, the
// revert commit's message, and decideRevert over states written out by hand (the suite in
// test-utils runs the whole undo on real repositories, judged by native git).
import {
  decideRevert,
  parseAgentCommit,
  projectCommitMessage,
  revertCommitMessage,
  type FileState,
  type RevertPath,
  type RevertState,
} from '@entity-git/project';
import { describe, expect, it } from 'vitest';

const A = 'a'.repeat(40);
const P = 'b'.repeat(40);
const H = 'c'.repeat(40);
const AGENT = 'agent (claude-sonnet-4.7 via OpenProgram) <agent@openprogram.invalid> 1700000100 +0000';
const blob = (c: string, path = 'x.txt'): FileState => ({ path, oid: c.repeat(40), mode: '100644' });
const none = (path = 'x.txt'): FileState => ({ path, oid: null, mode: null });

function path(over: Partial<RevertPath> = {}): RevertPath {
  return {
    path: 'x.txt',
    parent: blob('1'),
    agent: blob('2'),
    head: blob('2'),
    worktree: blob('2'),
    dirty: false,
    ...over,
  };
}
function state(over: Partial<RevertState> = {}): RevertState {
  return { head: A, agent: A, parent: P, revertedBy: null, onRemote: [], paths: [path()], clean: true, ...over };
}

describe('parseAgentCommit', () => {
  const message = projectCommitMessage('sess/1', 7, 'Fix the parser', 'd'.repeat(40));

  it('reads the commit entity-git writes: session as escaped, turn, subject, session commit', () => {
    expect(parseAgentCommit(message, AGENT, 'OpenProgram')).toEqual({
      session: 'sess%2F1',
      turn: 7,
      subject: 'Fix the parser',
      sessionCommit: 'd'.repeat(40),
    });
    expect(parseAgentCommit(projectCommitMessage('s', 1, '', null), AGENT, 'OpenProgram')).toEqual({
      session: 's',
      turn: 1,
      subject: '',
      sessionCommit: null,
    });
  });

  it('is null for a user’s commit, another product, trailers that disagree, and a revert commit', () => {
    expect(parseAgentCommit(message, 'User <u@example.com> 1 +0000', 'OpenProgram')).toBeNull();
    expect(parseAgentCommit(message, AGENT, 'Acme')).toBeNull();
    expect(parseAgentCommit(message.replace('Turn: 7', 'Turn: 8'), AGENT, 'OpenProgram')).toBeNull();
    expect(parseAgentCommit('[agent s] turn 7: x\n', AGENT, 'OpenProgram')).toBeNull();
    const facts = parseAgentCommit(message, AGENT, 'OpenProgram')!;
    expect(parseAgentCommit(revertCommitMessage(facts, A), AGENT, 'OpenProgram')).toBeNull();
  });

  it('the revert commit’s message: subject, the agent commit’s trailers, Reverts', () => {
    const facts = parseAgentCommit(message, AGENT, 'OpenProgram')!;
    expect(revertCommitMessage(facts, A)).toBe(
      `[agent sess%2F1] revert turn 7: Fix the parser\n\nSession: sess%2F1\nTurn: 7\nSession-Commit: ${'d'.repeat(40)}\nReverts: ${A}\n`,
    );
  });
});

describe('decideRevert', () => {
  it('an unpushed tip with nothing uncommitted is a reset of exactly the changed paths', () => {
    expect(decideRevert(state())).toEqual({ kind: 'reset', entries: [blob('1')], expect: [blob('2')] });
  });

  it('pushed, not the tip, anything uncommitted, or no parent: a revert commit instead', () => {
    for (const over of [{ onRemote: ['refs/remotes/origin/main'] }, { head: H }, { clean: false }, { parent: null }])
      expect(decideRevert(state(over))).toMatchObject({ kind: 'revert', entries: [blob('1')] });
  });

  it('a path changed since is a conflict; one the user has uncommitted work on is refused', () => {
    expect(decideRevert(state({ head: H, paths: [path({ head: blob('3'), worktree: blob('3') })] }))).toMatchObject({
      kind: 'refused',
      code: 'REVERT_CONFLICT',
      paths: ['x.txt'],
    });
    for (const p of [path({ dirty: true }), path({ worktree: blob('9') }), path({ worktree: none() })])
      expect(decideRevert(state({ clean: false, paths: [p] }))).toMatchObject({
        kind: 'refused',
        code: 'REVERT_REFUSED',
        reason: 'uncommitted-changes',
      });
  });

  it('a path already back to the parent’s needs nothing; all of them, or a revert found: already reverted', () => {
    const back = path({ path: 'y.txt', head: blob('1', 'y.txt'), worktree: blob('1', 'y.txt'), dirty: true });
    expect(decideRevert(state({ head: H, paths: [path(), back] }))).toMatchObject({
      kind: 'revert',
      entries: [blob('1')],
    });
    expect(decideRevert(state({ head: H, paths: [back] }))).toEqual({
      kind: 'already-reverted',
      by: 'content',
      revertCommit: null,
    });
    expect(decideRevert(state({ revertedBy: H }))).toEqual({ kind: 'already-reverted', by: 'revert', revertCommit: H });
  });

  it('a submodule among the paths is refused', () => {
    const gitlink = { path: 'lib', oid: 'e'.repeat(40), mode: '160000' };
    expect(decideRevert(state({ paths: [path({ path: 'lib', agent: gitlink, head: gitlink })] }))).toMatchObject({
      kind: 'refused',
      reason: 'submodule-changes',
    });
  });
});
