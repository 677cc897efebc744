// The conversation of a session page, cut into turns: the current one marked, the earlier ones
// foldable, and past the last {@link EARLIER_SHOWN} behind a button.
import type { DagNode } from '@entity-git/core';
import type { CheckoutResult } from 'ws-server/protocol';
import { h } from './dom.js';
import { contentText, plural, toolCalls } from './format.js';
import { EARLIER_SHOWN, type SessionPage } from './session-page.js';
import { groupTurns, turnGist, type TurnGroup } from './turns.js';

function renderMessage(m: DagNode): HTMLElement {
  const tool = m.role === 'tool' ? String((m.metadata as { tool?: unknown } | null)?.tool ?? 'tool') : null;
  const calls = toolCalls(m.content);
  return h(
    'article',
    { class: `message role-${m.role}`, 'data-testid': 'message', 'data-role': m.role, 'data-id': m.id },
    h(
      'header',
      {},
      h('span', { class: 'role' }, tool ? `tool · ${tool}` : m.role),
      h('span', { class: 'seq' }, `#${m.seq}`),
    ),
    h('div', { class: 'content' }, contentText(m.content)),
    calls.length > 0 ? h('div', { class: 'calls' }, `calls: ${calls.join(', ')}`) : null,
  );
}

function renderEarlier(s: SessionPage, g: TurnGroup, rerender: () => void): HTMLElement {
  const folded = s.collapsed.has(g.turn);
  const toggle = () => {
    if (folded) s.collapsed.delete(g.turn);
    else s.collapsed.add(g.turn);
    rerender();
  };
  return h(
    'section',
    { class: `turn-group${folded ? ' folded' : ''}`, 'data-testid': 'turn-group', 'data-turn': g.turn },
    h(
      'h2',
      { class: 'turn-heading' },
      h(
        'button',
        {
          class: 'turn-toggle',
          'aria-expanded': String(!folded),
          'data-testid': `turn-toggle-${g.turn}`,
          onclick: toggle,
        },
        `${folded ? '▸' : '▾'} Turn ${g.turn}`,
        h('span', { class: 'gist' }, turnGist(g)),
      ),
    ),
    folded ? null : g.messages.map(renderMessage),
  );
}

export function renderConversation(
  s: SessionPage,
  v: CheckoutResult,
  rerender: () => void,
  showAll: () => void,
  /** Shown in the current turn under its heading (its agent commit and the undo control, the files it changed). */
  currentExtra: Array<HTMLElement | null> = [],
): HTMLElement {
  const groups = groupTurns(v.messages, s.history.commits, v.turn);
  const current = groups.at(-1)!;
  const earlier = groups.slice(0, -1);
  const drawnFrom = s.showAll ? 0 : Math.max(0, earlier.length - EARLIER_SHOWN);
  const hidden = drawnFrom + s.notLoaded;
  const allFolded = earlier.length > 0 && earlier.every((g) => s.collapsed.has(g.turn));
  return h(
    'section',
    { class: 'messages', 'data-testid': 'messages', 'aria-label': 'Conversation' },
    earlier.length > 0
      ? h(
          'div',
          { class: 'row earlier-tools' },
          hidden > 0
            ? h(
                'button',
                {
                  class: 'link',
                  'data-testid': 'show-earlier',
                  onclick: () => {
                    s.showAll = true;
                    if (s.notLoaded > 0) showAll();
                    else rerender();
                  },
                },
                `Show ${plural(hidden, 'earlier turn')}`,
              )
            : null,
          h(
            'button',
            {
              class: 'link',
              'data-testid': 'fold-earlier',
              onclick: () => {
                if (allFolded) s.collapsed.clear();
                else for (const g of earlier) s.collapsed.add(g.turn);
                rerender();
              },
            },
            allFolded ? 'Expand earlier turns' : 'Collapse earlier turns',
          ),
        )
      : null,
    earlier.slice(drawnFrom).map((g) => renderEarlier(s, g, rerender)),
    h(
      'section',
      {
        class: 'turn-group current',
        'data-testid': 'current-turn',
        'data-turn': current.turn,
        'aria-current': 'step',
        'aria-labelledby': 'current-turn-heading',
      },
      h(
        'h2',
        { class: 'turn-heading', id: 'current-turn-heading' },
        `Turn ${current.turn} of ${v.turns}`,
        h('span', { class: 'gist' }, turnGist(current)),
      ),
      currentExtra,
      current.messages.map(renderMessage),
    ),
  );
}
