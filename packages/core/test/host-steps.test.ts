// Long synchronous computations cut into steps (issue 20, "never stall the host"): derive and the
// head branch's files as generators, run in one go or by HostYield.run with the host's turns
// between steps. Same result either way; macrotasks counted, never timed.
import { describe, expect, it } from 'vitest';
import { HostYield, runSteps } from '../src/mirror/host-yield.js';
import { headFileSteps, headFiles } from '../src/mirror/layout.js';
import type { Known } from '../src/mirror/repo/state.js';
import { derive, deriveSteps, type NodeShape } from '../src/model/derive.js';

/** A long session: `turns` turns of a user node, an assistant calling a tool, its result, a reply; one retry. */
function longDag(turns: number): Known[] {
  const out: Known[] = [];
  let last: string | null = null;
  let seq = 0;
  const add = (role: NodeShape['role'], predecessor: string | null, caller: string | null = null) => {
    seq++;
    const id = `n${seq}`;
    out.push({ id, seq, role, predecessor, caller, pending: false, name: `${seq}.json`, blob: `b${seq}` } as Known);
    return id;
  };
  for (let t = 0; t < turns; t++) {
    const u = add('user', last);
    const a = add('assistant', u);
    const r = add('tool', a, a);
    last = add('assistant', r);
  }
  add('assistant', `n${seq - 3}`); // a retry of the last reply
  return out;
}

/** Counts macrotask turns of the event loop while `work` runs. */
async function ticksDuring<T>(work: () => Promise<T>): Promise<{ value: T; ticks: number }> {
  let ticks = 0;
  let on = true;
  const tick = () => {
    ticks++;
    if (on) setImmediate(tick);
  };
  setImmediate(tick);
  const start = ticks;
  const value = await work();
  on = false;
  return { value, ticks: ticks - start };
}

describe('steps (HostYield.run, runSteps)', () => {
  const nodes = longDag(3000);

  it('derives a long DAG in steps, the same derivation as derive', () => {
    const steps = deriveSteps(nodes, null);
    let pauses = 0;
    let r = steps.next();
    for (; !r.done; r = steps.next()) pauses++;
    expect(pauses).toBeGreaterThan(10);
    expect(r.value).toEqual(derive(nodes, null));
    expect(runSteps(deriveSteps(nodes, 'n5'))).toEqual(derive(nodes, 'n5'));
  });

  it('gives the host turns between steps when due, none with everyMs 0; the results are equal', async () => {
    // everyMs this small: a turn is due at every step (a count, not a time, is asserted).
    const eager = await ticksDuring(() => new HostYield(1e-9).run(deriveSteps(nodes, null)));
    const never = await ticksDuring(() => new HostYield(0).run(deriveSteps(nodes, null)));
    expect(eager.ticks).toBeGreaterThan(10);
    expect(never.ticks).toBe(0);
    expect(eager.value).toEqual(never.value);
    const d = never.value;
    const files = await ticksDuring(() => new HostYield(1e-9).run(headFileSteps(d, 'flat')));
    expect(files.ticks).toBeGreaterThan(5);
    expect([...files.value]).toEqual([...headFiles(d, 'flat')]);
    expect(files.value.size).toBeGreaterThan(4 * 2999);
  });

  it('due() answers nothing before everyMs have passed since the host last had a turn, on one clock for all', async () => {
    const a = new HostYield(60_000);
    const b = new HostYield(1e-9);
    await b.due();
    // Just had a turn (b's): a minute has not passed.
    expect(a.due()).toBeUndefined();
    expect(new HostYield(0).due()).toBeUndefined();
    expect(b.due()).toBeInstanceOf(Promise);
  });
});
