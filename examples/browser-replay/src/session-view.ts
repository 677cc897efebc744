// A session on screen, centred on one turn: the replay head (prev / Turn N / M / next, the
// branch being viewed, the project outcome) stays at the top, the conversation is cut into turns
// with the current one marked and scrolled to, earlier turns collapsible, the timeline is a panel
// that scrolls by itself, and the composer stays at the bottom. Viewing a branch is read-only;
// making it HEAD is a button of its own.
import type { DagNode } from '@entity-git/core';
import type {
  BranchSummary,
  CheckoutResult,
  HistoryResult,
  ProjectStatusResult,
  ProjectSummary,
  ProjectTurnResult,
  SessionSummary,
  TimelineCommit,
} from 'ws-server/protocol';
import { branchLabel, type BranchFork } from './branch-labels.js';
import { h } from './dom.js';
import { abbreviate, contentText, plural, projectHref, sessionHref, short, toolCalls, when } from './format.js';
import { groupTurns, turnGist, type TurnGroup } from './turns.js';

export interface SessionPage {
  id: string;
  history: HistoryResult;
  view: CheckoutResult | null;
  branches: BranchSummary[];
  /** Where each branch leaves main (from each branch's history), by name; null for main itself. */
  forks: Map<string, BranchFork | null>;
  /** Earlier turns the user folded away. */
  collapsed: Set<number>;
  /** All earlier turns rendered, not only the last {@link EARLIER_SHOWN}. */
  showAll: boolean;
  /** Earlier turns whose messages were not read (a step reads a window of turns, see app.ts). */
  notLoaded: number;
  /** The timeline drawn for this history, reused while it is the same (a step only moves its mark). */
  timeline?: { key: string; el: HTMLElement; rows: Map<string, HTMLElement> };
}

/** Earlier turns rendered by default: the rest wait behind a button (a long session stays fast). */
export const EARLIER_SHOWN = 20;

export interface SessionViewInput {
  s: SessionPage;
  summary: SessionSummary | undefined;
  project: ProjectSummary | undefined;
  online: boolean;
  saved: boolean;
  saving: boolean;
  draft: string;
  sending: boolean;
  /** The project auto-commit of the last turn sent in this session (from this page or pushed by the server). */
  projectTurn: ProjectTurnResult | undefined;
  /** The project's workdir as last read (`project_status`); undefined when unknown (offline). */
  projectStatus: ProjectStatusResult | undefined;
  saveReport: HTMLElement | null;
  on: {
    rerender(): void;
    /** Read and show every earlier turn. */
    showAll(): void;
    makeHead(branch: string): void;
    save(): void;
    send(): void;
    draft(text: string): void;
  };
}

export const labelOf = (s: SessionPage, name: string) => branchLabel({ name }, s.forks.get(name) ?? null);

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

function renderConversation(s: SessionPage, v: CheckoutResult, rerender: () => void, showAll: () => void): HTMLElement {
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
      current.messages.map(renderMessage),
    ),
  );
}

function markCurrent(row: HTMLElement, current: boolean): void {
  row.classList.toggle('current', current);
  const link = row.firstElementChild as HTMLElement;
  if (current) link.setAttribute('aria-current', 'step');
  else link.removeAttribute('aria-current');
}

/**
 * The timeline panel. One row per commit (2,000 in a long session): built once per history and
 * reused while the history is the same, so a step moves the mark between two rows instead of
 * drawing every row again.
 */
function renderTimeline(s: SessionPage, v: CheckoutResult | null, branch: string | null): HTMLElement {
  const label = branch === null ? '—' : labelOf(s, branch);
  const key = `${s.history.branch}|${s.history.commits.length}|${s.history.commits[0]?.sha ?? ''}|${label}`;
  if (s.timeline?.key !== key) {
    const rows = new Map<string, HTMLElement>();
    const list = h(
      'ol',
      { 'data-testid': 'timeline' },
      [...s.history.commits].reverse().map((c: TimelineCommit) => {
        const row = h(
          'li',
          {},
          h(
            'a',
            {
              href: sessionHref(s.id, c.sha, s.history.branch ?? undefined),
              'data-testid': 'commit',
              'data-sha': c.sha,
            },
            h('span', { class: 'sha' }, short(c.sha)),
            ' ',
            h('span', { class: 'subject' }, c.subject),
            ' ',
            h('time', {}, when(c.time)),
          ),
        );
        rows.set(c.sha, row);
        return row;
      }),
    );
    const el = h(
      'nav',
      { class: 'timeline', 'aria-label': 'Timeline' },
      h('h3', {}, `Timeline · ${label} · ${plural(s.history.commits.length, 'commit')}`),
      list,
    );
    s.timeline = { key, el, rows };
  }
  const t = s.timeline;
  for (const row of t.el.querySelectorAll<HTMLElement>('li.current')) markCurrent(row, false);
  const row = v ? t.rows.get(v.commit) : undefined;
  if (row) markCurrent(row, true);
  return t.el;
}

/** Above the chat: the agent's commit of the last turn, or the design's warning while the user's tree is dirty. */
function renderProjectOutcome(input: SessionViewInput): HTMLElement | null {
  const t = input.projectTurn;
  const st = input.projectStatus;
  const project = input.project;
  // The warning: as read now (project_status), or, when that is unknown (offline), as the last turn reported it.
  const warning =
    st !== undefined
      ? st.dirty && st.warning !== null
        ? { text: st.warning, paths: st.user_paths }
        : null
      : t?.status === 'skipped' && t.reason === 'uncommitted-changes' && t.warning !== null
        ? { text: t.warning, paths: t.user_paths }
        : null;
  const parts: HTMLElement[] = [];
  if (t?.status === 'committed') {
    parts.push(
      h(
        'div',
        { class: 'project-turn committed', 'data-testid': 'project-commit', 'data-sha': t.commit.sha },
        h('span', {}, 'Agent commit '),
        h('span', { class: 'sha' }, short(t.commit.sha)),
        ` in ${project?.name ?? 'the project'}: `,
        h('span', { class: 'subject', 'data-testid': 'project-commit-subject' }, t.commit.subject),
        ' ',
        h('a', { href: projectHref(t.project_id), class: 'link' }, 'project history →'),
      ),
    );
  } else if (t?.status === 'failed') {
    parts.push(
      h(
        'div',
        { class: 'project-turn failed', 'data-testid': 'project-turn-failed' },
        'The agent’s edits could not be committed to the project.',
        h('small', { class: 'details' }, `${t.code}: ${t.message}`),
      ),
    );
  } else if (t?.status === 'skipped' && t.reason !== 'uncommitted-changes' && t.warning !== null) {
    parts.push(
      h(
        'div',
        { class: 'project-turn skipped', 'data-testid': 'project-turn-skipped', 'data-reason': t.reason },
        t.warning,
      ),
    );
  }
  if (warning !== null) {
    // The design's sentence, word for word (the ⚠ is drawn by CSS, outside the text).
    parts.push(
      h(
        'div',
        {
          class: 'project-warning',
          role: 'status',
          'data-testid': 'project-warning',
          'data-reason': 'uncommitted-changes',
          title: warning.paths.length > 0 ? `your uncommitted changes: ${warning.paths.join(', ')}` : null,
        },
        warning.text,
      ),
    );
  }
  return parts.length === 0 ? null : h('div', { class: 'project-outcome', 'data-testid': 'project-outcome' }, parts);
}

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
    bar,
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
    indicator,
    h('h1', { 'data-testid': 'session-title' }, summary?.title ?? s.id),
    replayHead,
    branch !== null && branch !== 'main' ? renderBranchDiff(s, branch) : null,
    input.saveReport,
    h(
      'div',
      { class: 'columns', 'data-testid': 'columns' },
      v
        ? renderConversation(s, v, on.rerender, on.showAll)
        : h('p', { class: 'empty' }, 'This session has no complete turn yet.'),
      renderTimeline(s, v, branch),
    ),
    composer,
  ].filter((x): x is HTMLElement => x !== null);
}

/**
 * After the page is on screen: the current turn's first message scrolled to just under the fixed
 * replay head (only when the turn changed, so folding or typing does not jump), and the
 * timeline panel scrolled so its current entry is in view.
 */
export function placeTurn(main: HTMLElement, scroll: boolean): void {
  const head = main.querySelector<HTMLElement>('[data-testid=replay-head]');
  if (head) main.style.setProperty('--head-h', `${head.offsetHeight}px`);
  const list = main.querySelector<HTMLElement>('[data-testid=timeline]');
  const entry = list?.querySelector<HTMLElement>('li.current');
  if (list && entry && list.scrollHeight > list.clientHeight) {
    const top = entry.offsetTop;
    if (top < list.scrollTop || top + entry.offsetHeight > list.scrollTop + list.clientHeight)
      list.scrollTop = Math.max(0, top - list.clientHeight / 2);
  }
  if (!scroll) return;
  const current = main.querySelector<HTMLElement>('[data-testid=current-turn]');
  current?.scrollIntoView({ block: 'start' });
}
