import type { ChangedPath } from '@entity-git/project';
import { describe, expect, it } from 'vitest';
import { classify } from '../src/decision.js';

const change = (path: string, over: Partial<ChangedPath> = {}): ChangedPath => ({
  path,
  staged: false,
  unstaged: true,
  untracked: false,
  conflicted: false,
  submodule: false,
  ...over,
});

describe('classify (the pure decision)', () => {
  it('a touched change is the agent’s; an untouched one is not', () => {
    const r = classify([change('a.ts'), change('b.ts')], new Set(['a.ts']), null, new Set());
    expect(r.mine).toEqual(['a.ts']);
    expect(r.others.map((c) => c.path)).toEqual(['b.ts']);
    expect(r.inSubmodules).toEqual([]);
  });

  it('a touched path the user had dirty before the turn (or below a dirty directory) stays the user’s', () => {
    const before = { user: ['src'], agent: new Set<string>() };
    const r = classify([change('src/a.ts'), change('b.ts')], new Set(['src/a.ts', 'b.ts']), before, new Set());
    expect(r.mine).toEqual(['b.ts']);
    expect(r.others.map((c) => c.path)).toEqual(['src/a.ts']);
  });

  it('a dirty path that held an agent’s pending edit is not the user’s; one recovery left staged is', () => {
    const before = { user: ['a.ts', 'b.ts'], agent: new Set(['a.ts', 'b.ts']) };
    const r = classify([change('a.ts'), change('b.ts')], new Set(['a.ts', 'b.ts']), before, new Set(['b.ts']));
    expect(r.mine).toEqual(['a.ts']);
    expect(r.others.map((c) => c.path)).toEqual(['b.ts']);
  });

  it('conflicted and submodule changes are never the agent’s; a touched path inside a submodule is named', () => {
    const r = classify(
      [change('c.ts', { conflicted: true }), change('lib', { submodule: true }), change('vendor', { submodule: true })],
      new Set(['c.ts', 'lib/x.ts', 'vendor']),
      null,
      new Set(),
    );
    expect(r.mine).toEqual([]);
    expect(r.inSubmodules).toEqual(['lib']);
    expect(r.others.map((c) => c.path)).toEqual(['c.ts', 'vendor']);
  });
});
