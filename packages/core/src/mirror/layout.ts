import type { Derivation } from '../model/derive.js';
import { runSteps, type Steps } from './host-yield.js';
import type { Layout } from './mirror.js';
import type { Known } from './repo/state.js';

/** The two layouts of `messages/`. */
export const LAYOUTS: readonly Layout[] = Object.freeze(['flat', 'sharded']);

/** The shard directory of a message in the sharded layout: its seq div 1000, 3 digits. */
export const shardOf = (seq: number): string => String(Math.floor(seq / 1000)).padStart(3, '0');

/** A message file's path under `messages/`. */
export const messagePath = (layout: Layout, n: { seq: number; name: string }): string =>
  layout === 'sharded' ? `${shardOf(n.seq)}/${n.name}` : n.name;

/** The message files of the head branch at its last complete turn: each one's path and node. */
export function headFiles(derivation: Derivation<Known>, layout: Layout): Map<string, Known> {
  return runSteps(headFileSteps(derivation, layout));
}

/** {@link headFiles} in steps (see {@link Steps}): a pause every 64 turns. */
export function* headFileSteps(derivation: Derivation<Known>, layout: Layout): Steps<Map<string, Known>> {
  const out = new Map<string, Known>();
  const branch = derivation.branches.find((b) => b.name === derivation.head);
  if (branch)
    for (let k = 0; k < branch.complete; k++) {
      if (k % 64 === 63) yield;
      for (const n of branch.turns[k]!.nodes) out.set(`messages/${messagePath(layout, n)}`, n);
    }
  return out;
}
