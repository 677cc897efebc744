// A session on screen, centred on one turn: the replay head (prev / Turn N / M / next, the
// branch being viewed, the project outcome) stays at the top, the conversation is cut into turns
// with the current one marked and scrolled to, earlier turns collapsible, the timeline is a panel
// that scrolls by itself, and the composer stays at the bottom. Viewing a branch is read-only;
// making it HEAD is a button of its own.
import { renderConversation } from './conversation-view.js';
import { renderExport } from './export-view.js';
import { h } from './dom.js';
import { abbreviate, plural, projectHref, sessionHref } from './format.js';
import { renderProjectOutcome } from './project-outcome-view.js';
import { labelOf, type SessionPage, type SessionViewInput } from './session-page.js';
import { placeTimeline, renderTimeline } from './timeline-view.js';
import { renderTurnFiles } from './turn-files-view.js';
import { renderTurnUndo } from './undo-view.js';
import { renderUsage } from './usage-view.js';

/** What the viewed branch says from where it leaves main, beside what main says there. */
function renderBranchDiff(s: SessionPage, branch: string): HTMLElement | null {
  const fork = s.forks.get(branch);
  if (!fork) return null;
  return h(
    'details',
    { class: 'branch-diff', 'data-testid': 'branch-diff' },
    h('summary', {}, `How ${labelOf(s, branch)} differs from main`),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, `main, turn ${fork.turn}`),
      h('dd', { 'data-testid': 'branch-diff-main' }, fork.main ?? '(main has no such turn)'),
      h('dt', {}, `this branch, turn ${fork.turn}`),
      h('dd', { 'data-testid': 'branch-diff-here' }, fork.here),
    ),
  );
}

export function renderSession(input: SessionViewInput): HTMLElement[] {
  const { s, summary, project, on } = input;
  const v = s.view;
  const branch = v?.branch ?? s.history.branch;
  const head = s.branches.find((b) => b.head) ?? null;
  const viewingOther = branch !== null && head !== null && head.name !== branch;
  const indicator = project
    ? h(
        'a',
        {
          class: 'project-indicator',
          href: projectHref(project.id),
          'data-testid': 'project-indicator',
          title: project.workdir,
        },
        h('span', { class: `dot status-${project.status}`, 'aria-hidden': 'true' }, '●'),
        h('strong', {}, project.name),
        h('span', { class: 'workdir' }, abbreviate(project.workdir)),
      )
    : h('div', { class: 'project-indicator none', 'data-testid': 'project-indicator-none' }, 'No project');
  const old = v !== null && v.next !== null;
  const bar = h(
    'div',
    { class: 'replay-bar', 'data-testid': 'replay-bar', role: 'toolbar', 'aria-label': 'Replay' },
    h(
      'button',
      {
        'data-testid': 'prev',
        disabled: !v?.prev,
        'aria-keyshortcuts': 'ArrowLeft k',
        onclick: () => {
          if (v?.prev) location.hash = sessionHref(s.id, v.prev, v.branch);
        },
      },
      '← prev turn',
    ),
    h(
      'span',
      { class: 'turn', 'data-testid': 'turn', tabindex: '-1' },
      v ? `Turn ${v.turn} / ${v.turns}` : 'No turn yet',
    ),
    h(
      'button',
      {
        'data-testid': 'next',
        disabled: !v?.next,
        'aria-keyshortcuts': 'ArrowRight j',
        onclick: () => {
          if (v?.next) location.hash = sessionHref(s.id, v.next, v.branch);
        },
      },
      'next turn →',
    ),
    h(
      'label',
      { class: 'branch' },
      h('span', {}, 'branch'),
      h(
        'select',
        {
          'data-testid': 'branch',
          onchange: (e: Event) => {
            const name = (e.target as HTMLSelectElement).value;
            const tip = s.branches.find((b) => b.name === name);
            location.hash = sessionHref(s.id, tip?.commit, name);
          },
        },
        s.branches.map((b) =>
          h(
            'option',
            { value: b.name, selected: b.name === branch },
            `${labelOf(s, b.name)} · ${plural(b.turns, 'turn')}${b.head ? ' (HEAD)' : ''}`,
          ),
        ),
      ),
    ),
    input.online && viewingOther
      ? h('button', { 'data-testid': 'make-head', onclick: () => on.makeHead(branch) }, 'Make this branch HEAD')
      : null,
    h('span', { class: 'spacer' }),
    branch === null ? null : renderExport(branch, on.exportTranscript),
    input.online
      ? h(
          'button',
          { 'data-testid': 'save-offline', disabled: input.saving, onclick: on.save },
          input.saved ? 'Save for offline again' : 'Save for offline',
        )
      : null,
  );
  const viewing = viewingOther
    ? h(
        'p',
        { class: 'hint viewing', 'data-testid': 'viewing-branch' },
        `Viewing ${labelOf(s, branch)}, read-only: HEAD stays on ${labelOf(s, head.name)}.`,
      )
    : null;
  const replayHead = h(
    'div',
    { class: 'replay-head', 'data-testid': 'replay-head' },
    // In the sticky head: on screen when the session opens scrolled to its last turn.
    indicator,
    bar,
    renderUsage(s.stats, v, branch === null ? 'branch' : labelOf(s, branch)),
    viewing,
    renderProjectOutcome(input),
  );
  const composer = input.online
    ? h(
        'form',
        {
          class: 'composer',
          'data-testid': 'composer',
          onsubmit: (e: Event) => {
            e.preventDefault();
            on.send();
          },
        },
        h(
          'label',
          { class: 'sr-only', for: 'composer-input' },
          old ? `Message, sent from turn ${v!.turn}: it starts a new branch` : 'Message',
        ),
        h(
          'textarea',
          {
            id: 'composer-input',
            name: 'message',
            rows: 2,
            placeholder: old ? 'A message from this turn starts a new branch' : 'Continue the conversation',
            'data-testid': 'message-input',
            'aria-keyshortcuts': 'Control+Enter Meta+Enter',
            oninput: (e: Event) => on.draft((e.target as HTMLTextAreaElement).value),
          },
          input.draft,
        ),
        h(
          'button',
          { type: 'submit', 'data-testid': 'send', disabled: input.sending },
          input.sending ? 'Sending…' : old ? `Send (fork from turn ${v!.turn})` : 'Send',
        ),
        old
          ? h(
              'p',
              { class: 'hint', 'data-testid': 'fork-hint' },
              `You are at turn ${v!.turn} of ${v!.turns}: sending forks the conversation here; the turns after it stay on ${labelOf(s, v!.branch)}. Ctrl+Enter sends.`,
            )
          : h('p', { class: 'hint' }, 'Ctrl+Enter (⌘+Enter) sends; ← → or j k step through the turns.'),
      )
    : h(
        'p',
        { class: 'hint composer', 'data-testid': 'composer-offline' },
        'Offline copy: replay only. Messages are sent through the server.',
      );
  return [
    h('h1', { 'data-testid': 'session-title' }, summary?.title ?? s.id),
    replayHead,
    branch !== null && branch !== 'main' ? renderBranchDiff(s, branch) : null,
    input.saveReport,
    h(
      'div',
      { class: 'columns', 'data-testid': 'columns' },
      v
        ? renderConversation(s, v, on.rerender, on.showAll, [renderTurnUndo(input), renderTurnFiles(input)])
        : h('p', { class: 'empty' }, 'This session has no complete turn yet.'),
      renderTimeline(s, v, branch),
    ),
    composer,
  ].filter((x): x is HTMLElement => x !== null);
}

/**
 * After the page is on screen: the current turn's first message scrolled to just under the fixed
 * replay head (only when the turn changed, so folding or typing does not jump), and the
 * timeline panel scrolled so its current entry is in view. The layout is read once, before any
 * write (the head's and the timeline's heights), then written.
 */
export function placeTurn(main: HTMLElement, s: SessionPage, scroll: boolean): void {
  const head = main.querySelector<HTMLElement>('[data-testid=replay-head]');
  const list = s.timeline?.list.isConnected ? s.timeline.list : null;
  const headH = head ? `${head.offsetHeight}px` : null;
  let listH = list?.clientHeight ?? 0;
  if (headH !== null && main.style.getPropertyValue('--head-h') !== headH) {
    // The timeline's height follows the head's (style.css): read it again once the head's is set.
    main.style.setProperty('--head-h', headH);
    listH = list?.clientHeight ?? 0;
  }
  placeTimeline(s, listH);
  if (!scroll) return;
  const current = main.querySelector<HTMLElement>('[data-testid=current-turn]');
  current?.scrollIntoView({ block: 'start' });
}
