// A turn's tokens and its branch's total, under the replay bar (core's `session_stats`). Read once
// per session opened, after the page is drawn (the DAG is read whole for it), and kept while the
// user steps through the turns.
import type { SessionStats } from '@entity-git/core';
import type { CheckoutResult } from 'ws-server/protocol';
import type { Backend } from './backend.js';
import { h } from './dom.js';
import type { SessionPage } from './session-page.js';

const figures = (x: { tokens: number | null; cost: number | null }) =>
  `${x.tokens === null ? 'no tokens recorded' : `${x.tokens.toLocaleString('en-US')} tokens`}${
    x.cost === null ? '' : `, cost ${Number(x.cost.toPrecision(6))}`
  }`;

/**
 * Read the session's figures into `s.stats`, then `render` if `s` is still the page on screen. A
 * failure (an old server without the action, say) leaves the figures out: replay goes on without them.
 */
export async function loadUsage(
  backend: Backend,
  s: SessionPage,
  current: () => SessionPage | null,
  render: () => void,
) {
  try {
    s.stats = await backend.call('session_stats', { session_id: s.id });
  } catch {
    s.stats = null;
    return;
  }
  if (current() === s) render();
}

/**
 * "Turn 3: 52 tokens" and "Branch total: 167 tokens (retry of turn 3)". Both parts are there from
 * the first draw, so the replay head keeps its height when the figures arrive (the current turn
 * stays where it was put under it).
 */
export function renderUsage(
  stats: SessionStats | null | undefined,
  v: CheckoutResult | null,
  label: string,
): HTMLElement | null {
  if (!v) return null;
  const branch = stats?.branches.find((b) => b.name === v.branch);
  const turn = branch?.turns.find((t) => t.commit === v.commit) ?? branch?.turns.find((t) => t.turn === v.turn);
  const none = stats === undefined ? '…' : 'not available';
  return h(
    'p',
    { class: 'usage', 'data-testid': 'usage', 'aria-busy': stats === undefined ? 'true' : null },
    h('span', { 'data-testid': 'turn-tokens' }, `Turn ${v.turn}: ${turn ? figures(turn) : none}`),
    h('span', { 'data-testid': 'branch-tokens' }, `Branch total: ${branch ? figures(branch) : none} (${label})`),
  );
}
