// The sidebar: the mode, the sessions (the open one marked for assistive technology too), the
// projects, + New Project and whether the app is cached. Below 760 px it is a drawer the menu
// button opens (see style.css).
import type { ProjectSummary, SessionSummary } from 'ws-server/protocol';
import { h } from './dom.js';
import { plural, projectHref, sessionHref } from './format.js';

export interface NewProjectForm {
  open: boolean;
  workdir: string;
  name: string;
  nameTouched: boolean;
  withSession: boolean;
  error: { text: string; detail: string } | null;
  busy: boolean;
  /** A question the form waits on before it goes on: moving the open session out of its project, or `git init`. */
  confirm: { kind: 'move'; from: string } | { kind: 'init'; workdir: string } | null;
  /** What the user said yes to for this directory. */
  moveConfirmed: boolean;
  initRepo: boolean;
}

export const blankProjectForm = (): NewProjectForm => ({
  open: false,
  workdir: '',
  name: '',
  nameTouched: false,
  withSession: true,
  error: null,
  busy: false,
  confirm: null,
  moveConfirmed: false,
  initRepo: false,
});

export interface SidebarInput {
  online: boolean;
  sessions: SessionSummary[];
  projects: ProjectSummary[];
  saved: Set<string>;
  currentSession: string | null;
  currentProject: string | null;
  onProjectPage: boolean;
  form: NewProjectForm;
  appCached: boolean;
  /** Extra controls under the projects (the import form). */
  projectTools: HTMLElement | null;
  on: { rerender(): void; createProject(): void };
}

export function renderSidebar(sidebar: HTMLElement, input: SidebarInput): HTMLElement[] {
  const { online, form: f, on } = input;
  const current = input.currentSession;
  const currentTitle = input.sessions.find((s) => s.id === current)?.title ?? current;
  return [
    h('header', { class: 'brand' }, h('a', { href: '#/' }, 'entity-git'), ' replay'),
    h(
      'div',
      { class: `mode ${online ? 'online' : 'offline'}`, 'data-testid': 'mode' },
      online ? '● online' : '○ offline — saved in this browser',
    ),
    h('h2', {}, 'Sessions'),
    input.sessions.length === 0
      ? h(
          'p',
          { class: 'empty', 'data-testid': 'sessions-empty' },
          online ? 'No sessions yet.' : 'No session saved in this browser yet.',
        )
      : h(
          'ul',
          { class: 'sessions', 'data-testid': 'sessions' },
          input.sessions.map((s) =>
            h(
              'li',
              {},
              h(
                'a',
                {
                  href: sessionHref(s.id),
                  class: s.id === current ? 'session current' : 'session',
                  'data-testid': 'session',
                  'data-id': s.id,
                  'aria-current': s.id === current ? 'page' : null,
                },
                h('span', { class: 'title' }, s.title ?? s.id),
                h('small', {}, `${s.branch ?? 'no commit yet'} · ${plural(s.turns, 'turn')}`),
                online && input.saved.has(s.id)
                  ? h('span', { class: 'badge', title: 'a copy is in this browser' }, 'saved')
                  : null,
              ),
            ),
          ),
        ),
    h('h2', {}, 'Projects'),
    input.projects.length === 0
      ? h('p', { class: 'empty', 'data-testid': 'projects-empty' }, 'No projects yet.')
      : h(
          'ul',
          { class: 'projects', 'data-testid': 'projects' },
          input.projects.map((p) =>
            h(
              'li',
              {},
              h(
                'a',
                {
                  href: projectHref(p.id),
                  class: p.id === input.currentProject ? 'project current' : 'project',
                  'data-testid': 'project',
                  'data-id': p.id,
                  'aria-current': p.id === input.currentProject && input.onProjectPage ? 'page' : null,
                },
                h(
                  'span',
                  {
                    class: `dot status-${p.status}`,
                    title: p.status,
                    'aria-hidden': 'true',
                    'data-testid': 'status-dot',
                  },
                  '●',
                ),
                h('span', { class: 'title' }, p.name),
                h('small', { 'data-testid': 'sessions-count' }, plural(p.sessions_count, 'session')),
                h('small', { class: `status status-${p.status}` }, p.status),
              ),
            ),
          ),
        ),
    !f.open
      ? h(
          'button',
          {
            class: 'link',
            'data-testid': 'new-project',
            disabled: !online,
            title: online ? null : 'projects are created on the server',
            onclick: () => {
              f.open = true;
              on.rerender();
              (sidebar.querySelector('input[name=workdir]') as HTMLInputElement | null)?.focus();
            },
          },
          '+ New Project',
        )
      : h(
          'form',
          {
            class: 'new-project',
            'data-testid': 'new-project-form',
            onsubmit: (e: Event) => {
              e.preventDefault();
              on.createProject();
            },
            // Escape closes the form, not the drawer around it (a second Escape does that).
            onkeydown: (e: Event) => {
              if ((e as KeyboardEvent).key !== 'Escape') return;
              e.preventDefault();
              e.stopPropagation();
              closeForm(f);
              on.rerender();
              (sidebar.querySelector('[data-testid=new-project]') as HTMLElement | null)?.focus();
            },
          },
          h('h3', {}, 'New project'),
          h(
            'label',
            {},
            '1. Directory (absolute path on the server’s machine)',
            h('input', {
              name: 'workdir',
              required: true,
              placeholder: '/home/you/code/project',
              value: f.workdir,
              oninput: (e: Event) => {
                f.workdir = (e.target as HTMLInputElement).value;
                f.initRepo = false;
                if (!f.nameTouched) {
                  f.name =
                    f.workdir
                      .split(/[\\/]/)
                      .filter((x) => x !== '')
                      .at(-1) ?? '';
                  (sidebar.querySelector('input[name=name]') as HTMLInputElement).value = f.name;
                }
              },
            }),
          ),
          h(
            'label',
            {},
            '2. Name',
            h('input', {
              name: 'name',
              required: true,
              value: f.name,
              oninput: (e: Event) => {
                f.name = (e.target as HTMLInputElement).value;
                f.nameTouched = true;
              },
            }),
          ),
          h('p', { class: 'hint' }, '3. Its git repository is reused; a folder in none gets git init if you say so.'),
          current
            ? h(
                'label',
                { class: 'check' },
                h('input', {
                  type: 'checkbox',
                  name: 'with-session',
                  checked: f.withSession,
                  onchange: (e: Event) => {
                    f.withSession = (e.target as HTMLInputElement).checked;
                    f.moveConfirmed = false;
                  },
                }),
                `4. Add the current session (${currentTitle})`,
              )
            : h('p', { class: 'hint' }, '4. Open a session first to add it (optional).'),
          f.confirm ? renderConfirm(f, on) : null,
          f.error
            ? h(
                'div',
                { class: 'error', role: 'alert', 'data-testid': 'new-project-error' },
                h('p', {}, f.error.text),
                h('small', { class: 'details' }, f.error.detail),
              )
            : null,
          h(
            'div',
            { class: 'row' },
            h(
              'button',
              { type: 'submit', disabled: f.busy, 'data-testid': 'create-project' },
              f.busy ? 'Creating…' : 'Create',
            ),
            h(
              'button',
              {
                type: 'button',
                class: 'link',
                onclick: () => {
                  closeForm(f);
                  on.rerender();
                },
              },
              'Cancel',
            ),
          ),
        ),
    input.projectTools,
    h('footer', { 'data-testid': 'app-cache' }, input.appCached ? 'app cached for offline use' : 'app not cached yet'),
  ].filter((x): x is HTMLElement => x !== null);
}

function closeForm(f: NewProjectForm): void {
  f.open = false;
  f.error = null;
  f.confirm = null;
}

/** The question the form waits on; yes goes on with the creation, no leaves things as they are. */
function renderConfirm(f: NewProjectForm, on: SidebarInput['on']): HTMLElement {
  const c = f.confirm!;
  const move = c.kind === 'move';
  return h(
    'div',
    {
      class: 'confirm',
      role: 'alertdialog',
      'aria-label': 'Confirm',
      'data-testid': move ? 'confirm-move' : 'confirm-init',
    },
    h(
      'p',
      {},
      move
        ? `The open session is in the project ${c.from}. Move it to the new project? Its agent's edits will be committed there instead.`
        : `${c.workdir} is in no git repository. Create one there (git init)?`,
    ),
    h(
      'div',
      { class: 'row' },
      h(
        'button',
        {
          type: 'button',
          'data-testid': 'confirm-yes',
          onclick: () => {
            if (move) f.moveConfirmed = true;
            else f.initRepo = true;
            f.confirm = null;
            on.createProject();
          },
        },
        move ? 'Move it' : 'Create the repository',
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'link',
          'data-testid': 'confirm-no',
          onclick: () => {
            if (move) f.withSession = false;
            f.confirm = null;
            on.rerender();
          },
        },
        move ? 'Keep it where it is' : 'Cancel',
      ),
    ),
  );
}
