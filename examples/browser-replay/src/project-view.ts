// A project's page: its status (changed here), workdir, sessions, a form to add a session — one
// already in another project is moved only after the user says so — and the project's own git
// history, agent commits marked.
import type {
  ProjectDetail,
  ProjectLogResult,
  ProjectStatus,
  ProjectSummary,
  SessionSummary,
} from 'ws-server/protocol';
import { h } from './dom.js';
import { plural, sessionHref, short, when } from './format.js';

export interface ProjectPage {
  detail: ProjectDetail;
  log: ProjectLogResult | null;
  /** A move the user is asked to confirm: the session is in another project. */
  pendingMove: { sessionId: string; from: string } | null;
  busy: boolean;
}

export interface ProjectViewInput {
  p: ProjectPage;
  sessions: SessionSummary[];
  projects: ProjectSummary[];
  online: boolean;
  on: {
    rerender(): void;
    setStatus(status: ProjectStatus): void;
    addSession(sessionId: string): void;
  };
}

const STATUSES: readonly ProjectStatus[] = ['active', 'paused', 'done'];
const STATUS_HINT: Record<ProjectStatus, string> = {
  active: 'the agent’s edits are auto-committed',
  paused: 'no auto-commit until it is active again',
  done: 'finished: no auto-commit',
};

export function renderProject(input: ProjectViewInput): HTMLElement[] {
  const { p, on } = input;
  const d = p.detail;
  const others = input.sessions.filter((s) => s.project_id !== d.id);
  const projectName = (id: string | null) => input.projects.find((x) => x.id === id)?.name ?? id ?? '';
  const move = p.pendingMove;
  const moving = move ? input.sessions.find((s) => s.id === move.sessionId) : undefined;
  const parts: Array<HTMLElement | null> = [
    h(
      'h1',
      { 'data-testid': 'project-name' },
      h('span', { class: `dot status-${d.status}`, 'aria-hidden': 'true' }, '●'),
      ' ',
      d.name,
    ),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'status'),
      h('dd', { 'data-testid': 'project-status' }, d.status),
      h('dt', {}, 'workdir'),
      h('dd', { 'data-testid': 'project-workdir', class: 'workdir' }, d.workdir),
      d.description ? [h('dt', {}, 'description'), h('dd', {}, d.description)] : null,
      h('dt', {}, 'created'),
      h('dd', {}, when(d.created_at)),
    ),
    input.online
      ? h(
          'label',
          { class: 'row status-control' },
          'Change status',
          h(
            'select',
            {
              'data-testid': 'project-status-select',
              disabled: p.busy,
              onchange: (e: Event) => on.setStatus((e.target as HTMLSelectElement).value as ProjectStatus),
            },
            STATUSES.map((st) => h('option', { value: st, selected: st === d.status }, `${st} — ${STATUS_HINT[st]}`)),
          ),
        )
      : null,
    h('h3', {}, `Sessions (${d.session_details.length})`),
    h(
      'ul',
      { class: 'project-sessions', 'data-testid': 'project-sessions' },
      d.session_details.map((s) =>
        h(
          'li',
          {},
          h('a', { href: sessionHref(s.id) }, s.title ?? s.id),
          h('small', {}, ` ${s.branch ?? '—'} · ${plural(s.turns, 'turn')}`),
        ),
      ),
    ),
    input.online && others.length > 0
      ? h(
          'form',
          {
            class: 'row',
            'data-testid': 'add-session',
            onsubmit: (e: Event) => {
              e.preventDefault();
              const id = ((e.target as HTMLFormElement).elements.namedItem('session') as HTMLSelectElement).value;
              const from = input.sessions.find((s) => s.id === id)?.project_id ?? null;
              if (from !== null && from !== d.id) {
                p.pendingMove = { sessionId: id, from };
                on.rerender();
              } else on.addSession(id);
            },
          },
          h('label', { class: 'sr-only', for: 'add-session-select' }, 'Session to add'),
          h(
            'select',
            { name: 'session', id: 'add-session-select', disabled: move !== null },
            others.map((s) =>
              h(
                'option',
                { value: s.id, selected: s.id === move?.sessionId },
                `${s.title ?? s.id}${s.project_id ? ` (in ${projectName(s.project_id)})` : ''}`,
              ),
            ),
          ),
          h('button', { type: 'submit', disabled: move !== null || p.busy }, 'Add session'),
        )
      : null,
    move
      ? h(
          'div',
          { class: 'confirm', role: 'alertdialog', 'aria-labelledby': 'move-question', 'data-testid': 'move-confirm' },
          h(
            'p',
            { id: 'move-question' },
            `“${moving?.title ?? move.sessionId}” belongs to ${projectName(move.from)}. A session is in one project at a time: move it to ${d.name}?`,
          ),
          h(
            'div',
            { class: 'row' },
            h(
              'button',
              {
                'data-testid': 'move-yes',
                onclick: () => {
                  p.pendingMove = null;
                  on.addSession(move.sessionId);
                },
              },
              `Move to ${d.name}`,
            ),
            h(
              'button',
              {
                class: 'link',
                'data-testid': 'move-no',
                onclick: () => {
                  p.pendingMove = null;
                  on.rerender();
                },
              },
              'Cancel',
            ),
          ),
        )
      : null,
    h('h3', {}, 'Commit history'),
    p.log === null
      ? h(
          'p',
          { class: 'hint' },
          input.online ? 'Could not read the repository.' : 'The project’s git history is read on the server.',
        )
      : !p.log.repo
        ? h(
            'p',
            { class: 'hint', 'data-testid': 'project-log' },
            'Not a git repository yet: the agent’s first auto-commit runs git init.',
          )
        : p.log.commits.length === 0
          ? h('p', { class: 'hint', 'data-testid': 'project-log' }, 'A git repository with no commit yet.')
          : h(
              'ol',
              { class: 'project-log', 'data-testid': 'project-log' },
              p.log.commits.map((c) =>
                h(
                  'li',
                  { 'data-testid': 'project-log-commit', 'data-sha': c.sha, 'data-agent': String(c.agent) },
                  h('span', { class: 'sha' }, short(c.sha)),
                  ' ',
                  c.agent ? h('span', { class: 'badge' }, 'agent') : null,
                  ' ',
                  h('span', { class: 'subject' }, c.subject),
                  ' ',
                  h('small', {}, `${c.agent ? c.committer : c.author} · ${when(c.time)}`),
                ),
              ),
            ),
    h(
      'p',
      { class: 'hint' },
      'Abstract memory (journal, wiki) builds on these sessions; it is not part of this example.',
    ),
  ];
  return parts.filter((x): x is HTMLElement => x !== null);
}
