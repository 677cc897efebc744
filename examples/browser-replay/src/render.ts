// Drawing the app: the frame (top bar, sidebar drawer, main, live region) made once, and `render`,
// which draws the state into it (the views draw each page: sidebar-view.ts, session-view.ts,
// project-view.ts). Every change re-renders the page, then puts focus back on the control that had
// it (a re-render replaces the elements), announces the turn in a live region, and — when the turn
// changed — scrolls it into view.
import type { Actions } from './actions.js';
import { TOKEN_KEY, type State } from './app-state.js';
import { h, replace } from './dom.js';
import { downloadTranscript } from './export-view.js';
import { renderImport } from './import-view.js';
import { renderProject } from './project-view.js';
import { renderSave } from './save-view.js';
import { renderSearchBox, renderSearchResults } from './search-view.js';
import { labelOf } from './session-page.js';
import { placeTurn, renderSession } from './session-view.js';
import { renderSidebar } from './sidebar-view.js';
import { keepFocus } from './kept-focus.js';

export interface Shell {
  menu: HTMLElement;
  sidebar: HTMLElement;
  main: HTMLElement;
  live: HTMLElement;
}

/** The frame, put into `root`; the menu button and the scrim open and close the drawer. */
export function buildShell(root: HTMLElement, state: State, render: () => void): Shell {
  const menu = h(
    'button',
    {
      class: 'menu',
      'data-testid': 'menu',
      'aria-controls': 'sidebar',
      'aria-expanded': 'false',
      onclick: () => drawer(!state.drawerOpen),
    },
    '☰ Menu',
  );
  // The drawer is drawn here as well as by `render`: the menu works while the app still connects.
  function drawer(open: boolean): void {
    state.drawerOpen = open;
    root.classList.toggle('drawer-open', open);
    menu.setAttribute('aria-expanded', String(open));
    render();
  }
  const topbar = h('header', { class: 'topbar' }, menu, h('span', { class: 'brand' }, 'entity-git replay'));
  const sidebar = h('aside', {
    class: 'sidebar',
    id: 'sidebar',
    'data-testid': 'sidebar',
    'aria-label': 'Sessions and projects',
  });
  const scrim = h('div', {
    class: 'scrim',
    'aria-hidden': 'true',
    onclick: () => drawer(false),
  });
  const main = h('main', { class: 'main', 'data-testid': 'main' });
  // Outside `main`, so a re-render never replaces it: screen readers hear each new turn once.
  const live = h('p', { class: 'sr-only', role: 'status', 'aria-live': 'polite', 'data-testid': 'live' });
  replace(root, topbar, sidebar, scrim, main, live);
  // Escape closes the narrow drawer (the form inside it stops the key first when it is open).
  root.ownerDocument.addEventListener('keydown', (e) => {
    if (e.key !== 'Escape' || e.defaultPrevented || !state.drawerOpen) return;
    drawer(false);
    menu.focus();
  });
  return { menu, sidebar, main, live };
}

export interface RenderDeps {
  root: HTMLElement;
  state: State;
  shell: Shell;
  online: () => boolean;
  navigate: () => Promise<void>;
  actions: Actions;
}

export function createRender({ root, state, shell, online, navigate, actions }: RenderDeps): () => void {
  const { menu, sidebar, main, live } = shell;
  const { importProjects, createProject, makeHead, save, send, setStatus, addToProject, undoTurn } = actions;
  const { openDiff, restoreFiles, undoRestore } = actions;
  let scrolledTo: string | null = null;

  // Made once and reused: a re-render (the service worker getting ready, say) must not empty the field under the user's typing.
  let tokenFormEl: HTMLElement | null = null;
  function tokenForm(): HTMLElement | null {
    if (!state.tokenRefused) return null;
    return (tokenFormEl ??= h(
      'form',
      {
        class: 'token-form',
        'data-testid': 'token-form',
        onsubmit: (e: Event) => {
          e.preventDefault();
          const value = ((e.target as HTMLFormElement).elements.namedItem('token') as HTMLInputElement).value.trim();
          if (value === '') return;
          localStorage.setItem(TOKEN_KEY, value);
          location.reload();
        },
      },
      h('label', { for: 'token-input' }, 'Access token'),
      h('input', {
        id: 'token-input',
        name: 'token',
        type: 'password',
        autocomplete: 'off',
        required: true,
        'data-testid': 'token-input',
      }),
      h('button', { type: 'submit', 'data-testid': 'token-submit' }, 'Connect'),
    ));
  }

  function render(): void {
    const refocus = keepFocus(root, main);
    const r = state.route;
    const current = r.page === 'session' ? r.id : null;
    replace(
      sidebar,
      renderSearchBox(r.page === 'search' ? r : null),
      ...renderSidebar(sidebar, {
        online: online(),
        sessions: state.sessions,
        projects: state.projects,
        saved: state.saved,
        currentSession: current,
        currentProject:
          r.page === 'project' ? r.id : (state.sessions.find((s) => s.id === current)?.project_id ?? null),
        onProjectPage: r.page === 'project',
        form: state.newProject,
        appCached: state.appCached,
        projectTools: renderImport(state.importForm, online(), {
          rerender: render,
          find: () => void importProjects(false),
          apply: () => void importProjects(true),
        }),
        on: { rerender: render, createProject: () => void createProject() },
      }),
    );
    root.classList.toggle('drawer-open', state.drawerOpen);
    menu.setAttribute('aria-expanded', String(state.drawerOpen));
    const n = state.notice;
    const banner = n
      ? h(
          'div',
          { class: `notice ${n.kind}`, 'data-testid': 'notice', role: n.kind === 'error' ? 'alert' : 'status' },
          h(
            'div',
            {},
            h('span', {}, n.text),
            n.detail ? h('small', { class: 'details', 'data-testid': 'notice-details' }, n.detail) : null,
          ),
          h(
            'button',
            {
              class: 'link',
              'aria-label': 'Dismiss',
              onclick: () => {
                state.notice = null;
                render();
              },
            },
            '×',
          ),
        )
      : null;
    let body: HTMLElement[];
    let turnKey: string | null = null;
    if (r.page === 'session' && state.session?.id === r.id) {
      const s = state.session;
      const summary = state.sessions.find((x) => x.id === s.id);
      const project = summary?.project_id ? state.projects.find((p) => p.id === summary.project_id) : undefined;
      body = renderSession({
        s,
        summary,
        project,
        online: online(),
        saved: state.saved.has(s.id),
        saving: state.save?.status === 'running' || state.save?.status === 'checking',
        draft: state.draft,
        sending: state.sending,
        projectTurn: state.projectTurns.get(s.id),
        projectStatus: project && online() ? state.projectStatus.get(project.id) : undefined,
        agentCommits: project && online() ? state.agentCommits.get(s.id) : undefined,
        undo: state.undo?.sessionId === s.id ? state.undo : null,
        turnFiles: state.turnFiles?.sessionId === s.id ? state.turnFiles : null,
        restore: state.restore?.sessionId === s.id ? state.restore : null,
        saveReport: state.save?.sessionId === s.id ? renderSave(state.save) : null,
        on: {
          rerender: render,
          showAll: () => void navigate(),
          makeHead: (b) => void makeHead(b),
          save: () => void save(),
          exportTranscript: (b, format) =>
            void downloadTranscript(state.backend, s.id, b, format).catch((err: unknown) => {
              state.notice = { kind: 'error', text: `Export failed: ${String(err)}`, at: location.hash };
              render();
            }),
          send: () => void send(),
          draft: (t) => {
            state.draft = t;
          },
          undo: (commit, sessionCommit) => void undoTurn(commit, sessionCommit),
          openDiff: (path) => void openDiff(path),
          restoreFiles: (turn, commit) => void restoreFiles(turn, commit),
          undoRestore: () => void undoRestore(),
        },
      });
      if (s.view) {
        turnKey = `${s.id}/${s.view.branch}/${s.view.commit}`;
        live.textContent = `Turn ${s.view.turn} / ${s.view.turns} · ${labelOf(s, s.view.branch)}`;
      }
    } else if (r.page === 'project' && state.project?.detail.id === r.id) {
      const p = state.project;
      body = renderProject({
        p,
        sessions: state.sessions,
        projects: state.projects,
        online: online(),
        on: {
          rerender: render,
          setStatus: (st) => void setStatus(p.detail.id, st),
          addSession: (id) => void addToProject(p.detail.id, id),
        },
      });
    } else if (r.page === 'search' && state.search !== null) {
      const titles = new Map(state.sessions.map((x) => [x.id, x.title]));
      body = renderSearchResults(state.search, titles, online());
    } else if (state.loading) body = [h('p', { class: 'empty' }, 'Loading…')];
    else
      body = [
        h(
          'p',
          { class: 'empty', 'data-testid': 'home' },
          state.sessions.length > 0
            ? 'Pick a session to replay it turn by turn.'
            : online()
              ? 'No sessions on the server.'
              : 'Nothing saved in this browser yet.',
        ),
      ];
    main.dataset.loading = String(state.loading);
    replace(main, banner, tokenForm(), ...body);
    refocus();
    if (turnKey !== null) {
      placeTurn(main, state.session!, turnKey !== scrolledTo);
      scrolledTo = turnKey;
    }
    // For the replay-app bench and tests: the page is drawn (and laid out, by placeTurn) for this state.
    if (!state.loading) root.dispatchEvent(new CustomEvent('replay:rendered', { detail: { turn: turnKey } }));
  }

  return render;
}
