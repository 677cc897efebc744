// In the turn on screen: the agent's commit that turn made in the project, and the control that
// undoes it ("Undo the agent's edits of this turn"), with the outcome — reset, reverted, already
// undone, or refused and why — in a live region that stays the same element while one undo runs,
// so a screen reader hears "Undoing…" and then the outcome.
import { h } from './dom.js';
import { projectHref, short } from './format.js';
import type { SessionViewInput } from './session-page.js';

/** One undo asked from the page: which agent commit, for which turn, and how it went. */
export interface UndoState {
  /** A new number per click: the live region is one element per undo. */
  id: number;
  sessionId: string;
  /** The session commit of the turn it was asked on. */
  sessionCommit: string;
  /** The agent's commit in the project. */
  commit: string;
  status: 'running' | 'done' | 'refused';
  /** For `done`: `reset`, `reverted` or `already-reverted`. */
  kind?: string;
  /** The sentence shown. */
  text: string;
  /** For `refused`: the code and the library's message. */
  detail?: string;
}

let outcome: { id: number; el: HTMLElement; text: HTMLElement; detail: HTMLElement } | null = null;

/** The live region of `undo`, made once per undo and updated in place. */
function outcomeOf(undo: UndoState): HTMLElement {
  if (outcome?.id !== undo.id) {
    const text = h('span', {});
    const detail = h('small', { class: 'details', 'data-testid': 'undo-details' });
    const el = h(
      'div',
      {
        class: 'undo-outcome',
        role: 'status',
        'aria-live': 'polite',
        tabindex: '-1',
        'data-testid': 'undo-outcome',
      },
      text,
      detail,
    );
    outcome = { id: undo.id, el, text, detail };
  }
  const o = outcome;
  o.el.dataset.status = undo.status;
  if (undo.kind) o.el.dataset.kind = undo.kind;
  else delete o.el.dataset.kind;
  if (o.text.textContent !== undo.text) o.text.textContent = undo.text;
  if (o.detail.textContent !== (undo.detail ?? '')) o.detail.textContent = undo.detail ?? '';
  o.detail.hidden = undo.detail === undefined;
  return o.el;
}

/** The agent commit of the turn on screen (by its session commit), its undo control, and the last undo's outcome; null when there is none of these. */
export function renderTurnUndo(input: SessionViewInput): HTMLElement | null {
  const v = input.s.view;
  if (v === null || !input.online) return null;
  const agent = input.agentCommits?.commits.find((c) => c.session_commit === v.commit) ?? null;
  const undo = input.undo !== null && input.undo.sessionCommit === v.commit ? input.undo : null;
  if (agent === null && undo === null) return null;
  const running = undo?.status === 'running';
  const project = input.project;
  const line =
    agent === null
      ? null
      : h(
          'p',
          { class: 'turn-agent-commit', 'data-testid': 'turn-agent-commit', 'data-sha': agent.commit },
          'This turn’s agent commit ',
          h('span', { class: 'sha' }, short(agent.commit)),
          project ? [' in ', h('a', { href: projectHref(project.id), class: 'link' }, project.name)] : null,
          agent.undone === null
            ? null
            : agent.undone === 'reset'
              ? ' — undone: the branch moved back over it.'
              : [' — undone by ', h('span', { class: 'sha' }, short(agent.revert_commit)), '.'],
        );
  const button =
    agent !== null && agent.undone === null
      ? h(
          'button',
          {
            type: 'button',
            class: 'undo-turn',
            'data-testid': 'undo-turn',
            disabled: running,
            'aria-describedby': 'undo-turn-hint',
            onclick: () => input.on.undo(agent.commit, v.commit),
          },
          running ? 'Undoing…' : 'Undo the agent’s edits of this turn',
        )
      : null;
  const hint = button
    ? h(
        'small',
        { class: 'hint', id: 'undo-turn-hint' },
        'Only the agent’s own commit is taken back; nothing of yours is changed. Refused when it cannot be done safely.',
      )
    : null;
  return h(
    'div',
    { class: 'turn-undo', 'data-testid': 'turn-undo' },
    line,
    button ? h('div', { class: 'row wrap' }, button, hint) : null,
    undo ? outcomeOf(undo) : null,
  );
}
