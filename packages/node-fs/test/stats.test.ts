import { createActions, MemoryDag, type DagNode, type JsonValue } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { GOLDEN_SESSION, goldenNodes } from '@entity-git/test-utils';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from './helpers.js';

const SID = GOLDEN_SESSION.id;

/** Costs where sources put them: `metadata.cost` (OpenCode's messages) and `metadata.usage.cost`. */
const COSTS: Record<string, JsonValue> = {
  a1: { tokens: 120, cost: 0.0012 },
  a2: { usage: { total_tokens: 300, cost: 0.003 } },
  a4r: { tokens: 41, cost: 0.0005, price: 7 },
  a4: { tokens: 40, price: 2 },
};

async function setup(withCosts: boolean) {
  const dag = new MemoryDag({ now: () => 1779600000 });
  await dag.createSession({ ...GOLDEN_SESSION, head: null });
  for (const n of goldenNodes()) await dag.addNode(withCosts && COSTS[n.id] ? { ...n, metadata: COSTS[n.id]! } : n);
  await dag.setHead(SID, GOLDEN_SESSION.head);
  const mirror = createNodeMirror({ dag, root: tempDir() });
  await mirror.sync(SID);
  return { dag, mirror, actions: createActions({ dag, mirror }) };
}

const tokensOf = (turns: { tokens: number | null }[]) => turns.map((t) => t.tokens);

describe('session_stats', () => {
  it('gives tokens per turn, per branch (the retry apart) and for the session, each node counted once', async () => {
    const { actions, mirror } = await setup(false);
    const s = await actions.session_stats({ session_id: SID });
    const byName = Object.fromEntries(s.branches.map((b) => [b.name, b]));
    expect(s.branches.map((b) => [b.name, b.head])).toEqual([
      ['main', false],
      ['fork-u2e', false],
      ['fork-u4', true],
      ['retry-a4r', false],
    ]);
    // Turn 1 (a1 120 + a2's usage.total_tokens 300) is shared by every branch.
    expect(tokensOf(byName.main!.turns)).toEqual([420, 90, null]);
    expect(tokensOf(byName['retry-a4r']!.turns)).toEqual([420, 91]);
    expect(tokensOf(byName['fork-u2e']!.turns)).toEqual([420, null]);
    expect(tokensOf(byName['fork-u4']!.turns)).toEqual([420, null]);
    expect(s.branches.map((b) => b.tokens)).toEqual([510, 420, 420, 511]);
    expect(s.tokens).toBe(120 + 300 + 50 + 40 + 41);
    expect(s.cost).toBeNull();
    // main's last turn waits on a pending reply: counted, flagged, no commit.
    expect(byName.main!.turns[2]).toEqual({
      turn: 3,
      node: 'a6',
      seq: 17,
      complete: false,
      commit: null,
      tokens: null,
      cost: null,
    });
    // Each committed turn names the commit native git holds there, whose message says the same tokens.
    const repo = mirror.repoPath(SID);
    for (const b of s.branches) {
      const done = b.turns.filter((t) => t.complete);
      const shas = git(repo, 'rev-list', '--first-parent', `refs/heads/${b.name}`).trim().split('\n').reverse();
      expect(done.map((t) => t.commit)).toEqual(shas);
      for (const t of done) {
        const body = git(repo, 'log', '-1', '--format=%B', t.commit!);
        expect(body.includes(`${t.tokens} tokens`)).toBe(t.tokens !== null);
      }
    }
  });

  it('reads cost where the source records it, and where configured', async () => {
    const { actions, dag, mirror } = await setup(true);
    const retry = await actions.session_stats({ session_id: SID, branch: 'retry-a4r' });
    expect(retry.branches.map((b) => b.name)).toEqual(['retry-a4r']);
    const [t1, t2] = retry.branches[0]!.turns;
    expect([t1!.cost, t2!.cost]).toEqual([0.0012 + 0.003, 0.0005]);
    expect(retry.branches[0]!.cost).toBe(0.0012 + 0.003 + 0.0005);
    expect(retry.cost).toBe(0.0012 + 0.003 + 0.0005);
    const price = (n: DagNode) => {
      const m = n.metadata as { price?: number } | null;
      return typeof m?.price === 'number' ? m.price : null;
    };
    const custom = createActions({ dag, mirror, metadataKeys: { cost: price } });
    const s = await custom.session_stats({ session_id: SID });
    expect(s.branches.map((b) => [b.name, b.cost])).toEqual([
      ['main', 2],
      ['fork-u2e', null],
      ['fork-u4', null],
      ['retry-a4r', 7],
    ]);
    expect(s.cost).toBe(9);
  });

  it('answers typed errors through handle', async () => {
    const { actions } = await setup(false);
    const codeOf = async (params: unknown) => {
      const r = await actions.handle({ action: 'session_stats', params });
      return r.ok ? 'ok' : r.error.code;
    };
    expect(await codeOf({ session_id: 'nope' })).toBe('SESSION_NOT_FOUND');
    expect(await codeOf({ session_id: SID, branch: 'retry-zz' })).toBe('BRANCH_NOT_FOUND');
    expect(await codeOf({ session_id: SID, branch: 3 })).toBe('INVALID_ARGUMENT');
    expect(await codeOf({})).toBe('INVALID_ARGUMENT');
    expect(await codeOf({ session_id: '' })).toBe('INVALID_ARGUMENT');
  });
});
