import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { GOLDEN_SESSION } from '@entity-git/test-utils';
import { PLAIN_ID, SHORT_ID, buildDb, git, gitRaw, json, revParseAll, run, tempDir, type Run } from './fixture.js';

// Fixed by the golden DAG and the default identity (the same ids as node-fs's golden test: the
// SQLite DAG written by the writer mirrors to the very commits an in-memory DAG does).
const TIPS = {
  main: '2d6739e6531c79338d437bcd12e6a1911db229f3',
  'fork-u2e': '91b1853f7d112a2d1c527c327cbb1fe5c82401c6',
  'fork-u4': '17a4c695c75333ca3ac7710e31cd26d953bab6d6',
  'retry-a4r': 'd080c326d39a5951408d85b37d2ad5734ef66218',
};
const TURN1 = '4b1cc3d267e0d1e614cf1f5670401133cff1ac7f';
const SID = GOLDEN_SESSION.id;

const dir = tempDir();
const db = join(dir, 'dag.db');
const root = join(dir, 'sessions');
const eg = (...args: string[]) => run(['--db', db, '--root', root, ...args]);
let firstSync: Run;

beforeAll(async () => {
  await buildDb(db);
  firstSync = await eg('sync');
});

describe('entity-git sync, then the read commands', () => {
  it('backfills every session with plain lines off a terminal, then is a no-op', async () => {
    expect(firstSync).toEqual({
      code: 0,
      stdout: `1/3 ${SID} backfilled\n2/3 ${PLAIN_ID} backfilled\n3/3 ${SHORT_ID} backfilled\nsynced 3 sessions: 3 backfilled, 0 failed\n`,
      stderr: '',
    });
    expect(firstSync.stdout).not.toContain('\r');
    const [again, one, asJson] = await Promise.all([
      eg('sync'),
      eg('sync', '--session', PLAIN_ID),
      eg('sync', '--json'),
    ]);
    expect(again).toEqual({
      code: 0,
      stdout: `1/3 ${SID} unchanged\n2/3 ${PLAIN_ID} unchanged\n3/3 ${SHORT_ID} unchanged\nsynced 3 sessions: 3 unchanged, 0 failed\n`,
      stderr: '',
    });
    expect(one).toEqual({
      code: 0,
      stdout: `1/1 ${PLAIN_ID} unchanged\nsynced 1 session: 1 unchanged, 0 failed\n`,
      stderr: '',
    });
    expect(json(asJson)).toEqual({
      ok: true,
      total: 3,
      counts: { unchanged: 3, backfilled: 0, empty: 0, repaired: 0, busy: 0, failed: 0 },
      sessions: [SID, PLAIN_ID, SHORT_ID].map((sessionId) => ({
        sessionId,
        action: 'unchanged',
        differences: [],
        error: null,
      })),
      recognised: null,
    });
  });

  it('leaves repositories native git accepts, with the golden ids', () => {
    const repo = join(root, SID);
    expect(revParseAll(repo)).toEqual({ ...TIPS, HEAD: 'fork-u4' });
    expect(git(repo, 'fsck', '--strict', '--no-dangling')).toBe('');
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(git(join(root, PLAIN_ID), 'log', '--format=%s', 'main').split('\n')).toEqual([
      'turn 2: Read the README',
      'turn 1: Hello',
    ]);
  });

  it('verify: exit 0, every session ok, in text and JSON', async () => {
    const [text, asJson, one] = await Promise.all([
      eg('verify'),
      eg('verify', '--json'),
      eg('verify', '--session', SID, '--json'),
    ]);
    expect(text).toEqual({
      code: 0,
      stdout: `ok      ${SID}\nok      ${PLAIN_ID}\nok      ${SHORT_ID}\nverified 3 sessions: 3 ok, 0 differ\n`,
      stderr: '',
    });
    expect(json(asJson)).toEqual({
      ok: true,
      sessions: [SID, PLAIN_ID, SHORT_ID].map((sessionId) => ({ sessionId, ok: true, differences: [], error: null })),
      recognised: null,
    });
    expect(json(one)).toEqual({
      ok: true,
      sessions: [{ sessionId: SID, ok: true, differences: [], error: null }],
      recognised: null,
    });
  });

  it('branches: every branch with its tip and turns, HEAD marked', async () => {
    const [asJson, text] = await Promise.all([eg('branches', SID, '--json'), eg('branches', SID)]);
    expect(json(asJson)).toEqual({
      sessionId: SID,
      head: 'fork-u4',
      branches: [
        { name: 'main', commit: TIPS.main, turns: 2, head: false },
        { name: 'fork-u2e', commit: TIPS['fork-u2e'], turns: 2, head: false },
        { name: 'fork-u4', commit: TIPS['fork-u4'], turns: 2, head: true },
        { name: 'retry-a4r', commit: TIPS['retry-a4r'], turns: 2, head: false },
      ],
      recognised: null,
    });
    expect(text.stdout).toBe(
      '  main      2d6739e653 2 turns\n  fork-u2e  91b1853f7d 2 turns\n* fork-u4   17a4c695c7 2 turns\n  retry-a4r d080c326d3 2 turns\n',
    );
  });

  it('log: HEAD branch by default, --branch for another, messages equal to native git', async () => {
    const [head, main, text] = await Promise.all([
      eg('log', SID, '--json'),
      eg('log', SID, '--branch', 'main', '--json'),
      eg('log', PLAIN_ID),
    ]);
    const body = (sha: string) =>
      gitRaw(join(root, SID), 'cat-file', 'commit', sha).split('\n\n').slice(1).join('\n\n');
    expect(json(head)).toEqual({
      sessionId: SID,
      branch: 'fork-u4',
      commits: [
        {
          sha: TIPS['fork-u4'],
          parents: [TURN1],
          time: 1779500028,
          turn: 2,
          node: 'a7',
          seq: 19,
          subject: 'turn 2: 从头开始：总结这个仓库',
          message: body(TIPS['fork-u4']),
        },
        {
          sha: TURN1,
          parents: [],
          time: 1779500009,
          turn: 1,
          node: 'a2',
          seq: 6,
          subject: 'turn 1: 列出 src 目录中的文件 🙂 请简短回答',
          message: body(TURN1),
        },
      ],
      recognised: null,
    });
    expect(json(head).commits[1].message).toBe(
      'turn 1: 列出 src 目录中的文件 🙂 请简短回答\n\nassistant: There are two files: a.ts and b.ts. 👍 完成\ntools: list, read\n\n' +
        '[meta: turn took 7.5s, 2 tools, 420 tokens]\n\nSession: golden-1\nTurn: 1\nNode: a2\nSeq: 6\n',
    );
    const m = json(main);
    expect(m.branch).toBe('main');
    expect(
      m.commits.map((c: { sha: string; turn: number; node: string; seq: number }) => [c.sha, c.turn, c.node, c.seq]),
    ).toEqual([
      [TIPS.main, 2, 'a4', 12],
      [TURN1, 1, 'a2', 6],
    ]);
    const plain = git(join(root, PLAIN_ID), 'log', '--format=%H %ct', 'main')
      .split('\n')
      .map((l) => l.split(' '));
    expect(text).toEqual({
      code: 0,
      stdout: `${plain[0]![0]!.slice(0, 10)} 2026-05-24T05:20:06Z turn 2: Read the README\n${plain[1]![0]!.slice(0, 10)} 2026-05-24T05:20:02Z turn 1: Hello\n`,
      stderr: '',
    });
    expect(plain.map((p) => Number(p[1]))).toEqual([1779600006, 1779600002]);
  });

  it('show: the tip by default, a turn number, a full id or a prefix; turn N / M and prev/next', async () => {
    const [tip, turn1Main, byPrefix, byFull, plain2] = await Promise.all([
      eg('show', SID, '--json'),
      eg('show', SID, '1', '--branch', 'main', '--json'),
      eg('show', SID, TIPS.main.slice(0, 7), '--json'),
      eg('show', SID, TURN1, '--json'),
      eg('show', PLAIN_ID, '2', '--json'),
    ]);
    const t = json(tip);
    expect(Object.keys(t)).toEqual([
      'sessionId',
      'branch',
      'commit',
      'turn',
      'turns',
      'prev',
      'next',
      'meta',
      'messages',
      'recognised',
    ]);
    expect({ ...t, messages: t.messages.map((n: { id: string }) => n.id) }).toEqual({
      sessionId: SID,
      branch: 'fork-u4',
      commit: TIPS['fork-u4'],
      turn: 2,
      turns: 2,
      prev: TURN1,
      next: null,
      meta: { created_at: 1779500000, id: SID },
      messages: ['s1', 'u1', 'a1', 't1', 't2', 'a2', 'u4', 'a7'],
      recognised: null,
    });
    expect(t.messages[3]).toEqual({
      id: 't1',
      session_id: SID,
      seq: 4,
      role: 'tool',
      content: 'a.ts\nb.ts',
      predecessor: 'a1',
      caller: 'a1',
      created_at: 1779500006,
      metadata: { tool: 'list' },
    });
    const m1 = json(turn1Main);
    expect([m1.branch, m1.commit, m1.turn, m1.turns, m1.prev, m1.next, m1.messages.length]).toEqual([
      'main',
      TURN1,
      1,
      2,
      null,
      TIPS.main,
      6,
    ]);
    const p = json(byPrefix);
    // HEAD's branch does not hold main's tip, so the view walks the first branch that does.
    expect([p.branch, p.commit, p.turn, p.turns, p.prev, p.next]).toEqual(['main', TIPS.main, 2, 2, TURN1, null]);
    expect(p.messages.map((n: { id: string }) => n.id)).toEqual([
      's1',
      'u1',
      'a1',
      't1',
      't2',
      'a2',
      'u2',
      'a3',
      't3',
      't4',
      't5',
      'a4',
    ]);
    const f = json(byFull);
    expect([f.branch, f.turn, f.turns, f.prev, f.next]).toEqual(['fork-u4', 1, 2, null, TIPS['fork-u4']]);
    const plainTips = git(join(root, PLAIN_ID), 'log', '--format=%H', 'main').split('\n');
    const v = json(plain2);
    expect([v.branch, v.commit, v.turn, v.turns, v.prev, v.next]).toEqual([
      'main',
      plainTips[0],
      2,
      2,
      plainTips[1],
      null,
    ]);
    expect(v.messages.map((n: { id: string; role: string }) => `${n.role}:${n.id}`)).toEqual([
      'user:p-u1',
      'assistant:p-a1',
      'user:p-u2',
      'assistant:p-a2',
      'tool:p-t1',
      'assistant:p-a3',
    ]);
  });

  it('show in text: a header, then the messages cut into turns', async () => {
    const plainTips = git(join(root, PLAIN_ID), 'log', '--format=%H', 'main').split('\n');
    expect(await eg('show', PLAIN_ID)).toEqual({
      code: 0,
      stdout: [
        `session ${PLAIN_ID}, branch main, turn 2 / 2`,
        `commit ${plainTips[0]}`,
        `prev   ${plainTips[1]}`,
        'next   -',
        '',
        '-- turn 1 --',
        '#1 user p-u1: Hello',
        '#2 assistant p-a1: Hi! How can I help?',
        '',
        '-- turn 2 --',
        '#3 user p-u2: Read the README',
        '#4 assistant p-a2: Reading.',
        '#5 tool p-t1 (read): # README',
        '#6 assistant p-a3: It is a README.',
        '',
      ].join('\n'),
      stderr: '',
    });
  });
});

describe('entity-git --layout', () => {
  it('makes new repositories sharded (the node-fs ids), keeps an existing one as it is, rejects other values', async () => {
    const other = join(tempDir(), 'sessions');
    const sharded = await run(['--db', db, '--root', other, '--layout', 'sharded', 'sync', '--session', SID]);
    expect(sharded.code).toBe(0);
    const repo = join(other, SID);
    expect(git(repo, 'config', '--get', 'entitygit.layout').trim()).toBe('sharded');
    expect(git(repo, 'rev-parse', 'main', 'fork-u4').trim().split('\n')).toEqual([
      'd40c1628d1614b314609b730db3c86d7c91a5afe',
      '84641703ebed612c69c87ff666a0e9dc41a3cc03',
    ]);
    expect(git(repo, 'ls-tree', '--name-only', 'HEAD:messages').trim()).toBe('000');
    // The flat root of the other tests stays flat under --layout sharded.
    expect(await run(['--db', db, '--root', root, '--layout', 'sharded', 'verify', '--session', SID])).toMatchObject({
      code: 0,
    });
    expect(git(join(root, SID), 'rev-parse', 'main').trim()).toBe(TIPS.main);
    const bad = await run(['--db', db, '--root', other, '--layout', 'nested', 'sync']);
    expect(bad).toMatchObject({ code: 2, stdout: '' });
    expect(bad.stderr).toContain('--layout must be one of flat, sharded, got "nested"');
  });
});
