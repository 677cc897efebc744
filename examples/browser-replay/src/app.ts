// The app: state, navigation and the actions behind the controls; the views draw it
// (sidebar-view.ts, session-view.ts, project-view.ts). Every change re-renders the page, then
// puts focus back on the control that had it (a re-render replaces the elements), announces the
// turn in a live region, and — when the turn changed — scrolls it into view.
import type {
  ProjectStatus,
  ProjectStatusResult,
  ProjectSummary,
  ProjectTurnResult,
  SessionSummary,
} from 'ws-server/protocol';
import { connect, localStore, type Backend } from './backend.js';
import { h, replace } from './dom.js';
import { shownError } from './errors.js';
import { projectHref, sessionHref } from './format.js';
import { bindReplayKeys } from './keyboard.js';
import { saveForOffline } from './offline.js';
import { renderProject, type ProjectPage } from './project-view.js';
import { forkOf, type BranchFork } from './branch-labels.js';
import { EARLIER_SHOWN, labelOf, type SessionPage } from './session-page.js';
import { placeTurn, renderSession } from './session-view.js';
import { blankProjectForm, renderSidebar, type NewProjectForm } from './sidebar-view.js';
import { renderSave, type SaveState } from './save-view.js';
import { blankImportForm, renderImport, type ImportForm } from './import-view.js';

export { abbreviate } from './format.js';

type Route =
  | { page: 'home' }
  | { page: 'session'; id: string; sha?: string; branch?: string }
  | { page: 'project'; id: string };

/** A banner. `at` is the page (hash) it belongs to: it goes when the user leaves that page; none for the app's own state (offline). */
interface Notice {
  kind: 'info' | 'warn' | 'error';
  text: string;
  detail?: string;
  at?: string;
}

interface State {
  backend: Backend;
  notice: Notice | null;
  /** The server refused our token: a field to give another. */
  tokenRefused: boolean;
  sessions: SessionSummary[];
  projects: ProjectSummary[];
  /** Sessions with a copy in this browser. */
  saved: Set<string>;
  route: Route;
  session: SessionPage | null;
  project: ProjectPage | null;
  save: SaveState | null;
  newProject: NewProjectForm;
  importForm: ImportForm;
  /** The project auto-commit of the last turn, per session (sent from here or pushed by the server). */
  projectTurns: Map<string, ProjectTurnResult>;
  /** Each project's workdir as last read with `project_status`. */
  projectStatus: Map<string, ProjectStatusResult>;
  draft: string;
  sending: boolean;
  appCached: boolean;
  loading: boolean;
  drawerOpen: boolean;
}

const TOKEN_KEY = 'entity-git-replay-token';

/** `#token=…` (the link the server prints) is kept for later loads and taken out of the address bar. */
function takeToken(): string | null {
  const m = /(?:^#|&)token=([^&]*)/.exec(location.hash);
  if (m) {
    const token = decodeURIComponent(m[1]!);
    localStorage.setItem(TOKEN_KEY, token);
    history.replaceState(null, '', `${location.pathname}${location.search}#/`);
    return token;
  }
  return localStorage.getItem(TOKEN_KEY);
}

function parseRoute(hash: string): Route {
  const parts = hash
    .replace(/^#\/?/, '')
    .split('/')
    .filter((p) => p !== '')
    .map((p) => decodeURIComponent(p));
  if (parts[0] === 's' && parts[1]) {
    const r: Route = { page: 'session', id: parts[1] };
    if (parts[2] === 'c' && parts[3]) r.sha = parts[3];
    if (parts[2] === 'c' && parts[4]) r.branch = parts[4];
    return r;
  }
  if (parts[0] === 'p' && parts[1]) return { page: 'project', id: parts[1] };
  return { page: 'home' };
}

/** Branches whose fork point is read (one history each): past this many, the rest keep their names. */
const LABELLED_BRANCHES = 12;

export async function startApp(root: HTMLElement): Promise<void> {
  const state: State = {
    backend: null as unknown as Backend,
    notice: null,
    tokenRefused: false,
    sessions: [],
    projects: [],
    saved: new Set(),
    route: parseRoute(location.hash),
    session: null,
    project: null,
    save: null,
    newProject: blankProjectForm(),
    importForm: blankImportForm(),
    projectTurns: new Map(),
    projectStatus: new Map(),
    draft: '',
    sending: false,
    appCached: false,
    loading: false,
    drawerOpen: false,
  };

  const menu = h(
    'button',
    {
      class: 'menu',
      'data-testid': 'menu',
      'aria-controls': 'sidebar',
      'aria-expanded': 'false',
      onclick: () => {
        state.drawerOpen = !state.drawerOpen;
        render();
      },
    },
    '☰ Menu',
  );
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
    onclick: () => {
      state.drawerOpen = false;
      render();
    },
  });
  const main = h('main', { class: 'main', 'data-testid': 'main' });
  // Outside `main`, so a re-render never replaces it: screen readers hear each new turn once.
  const live = h('p', { class: 'sr-only', role: 'status', 'aria-live': 'polite', 'data-testid': 'live' });
  replace(root, topbar, sidebar, scrim, main, live);
  let scrolledTo: string | null = null;

  const online = () => state.backend.mode === 'online';

  const listen = (b: Backend) =>
    b.onEvent?.((e) => {
      if (e.event !== 'project_turn') return;
      state.projectTurns.set(e.session_id, e.result);
      void readProjectStatus(e.result.project_id).then(render);
    });

  const goOffline = async (text: string) => {
    state.backend = (await localStore()).backend;
    state.notice = { kind: 'warn', text };
    state.projectStatus.clear();
    await refreshLists();
    await navigate();
  };

  const token = takeToken();
  const conn = await connect(token);
  if (conn.ok) {
    state.backend = conn.backend;
    listen(conn.backend);
    void conn.closed.then(() =>
      goOffline('The server connection closed. Showing the sessions saved in this browser (read-only).'),
    );
  } else {
    state.backend = (await localStore()).backend;
    state.tokenRefused = conn.reason === 'refused';
    state.notice =
      conn.reason === 'refused'
        ? {
            kind: 'error',
            text: 'The server refused this page: the token is missing or wrong. Enter the token the server printed, or open its link. Meanwhile: the sessions saved in this browser.',
          }
        : {
            kind: 'warn',
            text: 'Offline: the server is unreachable. Showing the sessions saved in this browser (read-only).',
          };
  }

  const fail = (err: unknown) => {
    const e = shownError(err);
    state.notice = { kind: 'error', text: e.text, detail: `${e.code}: ${e.detail}`, at: location.hash };
  };

  async function refreshLists(): Promise<void> {
    try {
      const [s, p] = await Promise.all([
        state.backend.call('list_sessions', {}),
        state.backend.call('list_projects', {}),
      ]);
      state.sessions = s.sessions;
      state.projects = p.projects;
    } catch (err) {
      fail(err);
    }
    const local = await localStore().catch(() => null);
    state.saved = new Set(local ? await local.dag.listSessions().catch(() => []) : []);
    render();
  }

  /** The workdir read without committing (online only); kept until it reads clean. */
  async function readProjectStatus(projectId: string | null | undefined): Promise<void> {
    if (!projectId || !online()) return;
    try {
      state.projectStatus.set(projectId, await state.backend.call('project_status', { project_id: projectId }));
    } catch {
      state.projectStatus.delete(projectId);
    }
  }

  async function loadForks(
    sessionId: string,
    branches: SessionPage['branches'],
    known: Map<string, BranchFork | null>,
  ): Promise<Map<string, BranchFork | null>> {
    const b = state.backend;
    const forks = new Map<string, BranchFork | null>();
    const main = branches.find((x) => x.name === 'main');
    if (!main || branches.length === 1) return forks;
    const mainLog = (await b.call('git_history', { session_id: sessionId, branch: 'main' })).commits;
    for (const br of branches.filter((x) => x.name !== 'main').slice(0, LABELLED_BRANCHES)) {
      if (known.has(br.name)) {
        forks.set(br.name, known.get(br.name)!);
        continue;
      }
      const log = (await b.call('git_history', { session_id: sessionId, branch: br.name })).commits;
      forks.set(br.name, forkOf(log, mainLog));
    }
    return forks;
  }

  async function loadSession(r: Extract<Route, { page: 'session' }>): Promise<void> {
    const b = state.backend;
    const prev = state.session?.id === r.id ? state.session : null;
    // A step within the branch on screen reads a window of turns from the DAG (the current one and
    // the earlier ones drawn), not the whole conversation: history and branches are on screen already.
    if (
      prev &&
      r.sha &&
      (r.branch ?? prev.history.branch) === prev.history.branch &&
      prev.history.branch !== null &&
      prev.view
    ) {
      const commits = prev.history.commits;
      const i = commits.findIndex((c) => c.sha === r.sha);
      const c = commits[i];
      if (c && c.node !== null && c.seq !== null && c.turn !== null && !prev.showAll) {
        const older = commits[i + 1 + EARLIER_SHOWN];
        const { messages } = await b.call('turn_messages', {
          session_id: r.id,
          to_node: c.node,
          to_seq: c.seq,
          from_seq: older?.seq ?? 0,
        });
        prev.view = {
          session_id: r.id,
          commit: c.sha,
          branch: prev.history.branch,
          turn: c.turn,
          turns: commits.length,
          prev: commits[i + 1]?.sha ?? null,
          next: commits[i - 1]?.sha ?? null,
          messages,
          meta: prev.view.meta,
          continue_from: c.node,
        };
        prev.notLoaded = older?.turn ?? 0;
        return;
      }
      if (c) {
        prev.view = await b.call('git_checkout', { session_id: r.id, commit_sha: c.sha, branch: prev.history.branch });
        prev.notLoaded = 0;
        return;
      }
    }
    let history = await b.call('git_history', r.branch ? { session_id: r.id, branch: r.branch } : { session_id: r.id });
    const sha = r.sha ?? history.commits[0]?.sha;
    let view: SessionPage['view'] = null;
    let notLoaded = 0;
    const i = history.commits.findIndex((c) => c.sha === sha);
    const c = history.commits[i];
    if (c && c.node !== null && c.seq !== null && c.turn !== null && history.branch !== null && !prev?.showAll) {
      // On the branch read: a window of turns from the DAG, as a step does.
      const older = history.commits[i + 1 + EARLIER_SHOWN];
      const { messages } = await b.call('turn_messages', {
        session_id: r.id,
        to_node: c.node,
        to_seq: c.seq,
        from_seq: older?.seq ?? 0,
      });
      view = {
        session_id: r.id,
        commit: c.sha,
        branch: history.branch,
        turn: c.turn,
        turns: history.commits.length,
        prev: history.commits[i + 1]?.sha ?? null,
        next: history.commits[i - 1]?.sha ?? null,
        messages,
        meta: null,
        continue_from: c.node,
      };
      notLoaded = older?.turn ?? 0;
    } else if (sha) {
      view = await b.call(
        'git_checkout',
        history.branch
          ? { session_id: r.id, commit_sha: sha, branch: history.branch }
          : { session_id: r.id, commit_sha: sha },
      );
      if (view.branch !== history.branch)
        history = await b.call('git_history', { session_id: r.id, branch: view.branch });
    }
    const { branches } = await b.call('git_branches', { session_id: r.id });
    const forks = await loadForks(r.id, branches, prev?.forks ?? new Map()).catch(
      () => new Map<string, BranchFork | null>(),
    );
    state.session = {
      id: r.id,
      history,
      view,
      branches,
      forks,
      collapsed: prev?.collapsed ?? new Set(),
      showAll: prev?.showAll ?? false,
      notLoaded,
    };
  }

  async function loadProject(id: string): Promise<void> {
    const detail = await state.backend.call('project_detail', { project_id: id });
    const log = online() ? await state.backend.call('project_log', { project_id: id }).catch(() => null) : null;
    state.project = {
      detail,
      log,
      pendingMove: state.project?.detail.id === id ? state.project.pendingMove : null,
      busy: false,
    };
  }

  async function navigate(): Promise<void> {
    state.route = parseRoute(location.hash);
    state.drawerOpen = false;
    // A banner of another page is stale here.
    if (state.notice?.at !== undefined && state.notice.at !== location.hash) state.notice = null;
    state.loading = true;
    main.dataset.loading = 'true';
    try {
      if (state.route.page === 'session') {
        if (state.session?.id !== state.route.id) state.draft = '';
        if (state.save && state.save.sessionId !== state.route.id) state.save = null;
        const id = state.route.id;
        await loadSession(state.route);
        await readProjectStatus(state.sessions.find((s) => s.id === id)?.project_id);
      } else {
        state.session = null;
      }
      if (state.route.page === 'project') await loadProject(state.route.id);
      else state.project = null;
    } catch (err) {
      fail(err);
      if (state.route.page === 'session') state.session = null;
    }
    state.loading = false;
    render();
  }

  // ---- actions ----

  /** Make a branch HEAD: an explicit action (viewing a branch moves nothing). */
  async function makeHead(name: string): Promise<void> {
    const s = state.session;
    if (!s) return;
    try {
      const r = await state.backend.call('git_switch_branch', { session_id: s.id, branch: name });
      state.notice = {
        kind: 'info',
        text: `HEAD is now ${labelOf(s, name)}: new messages continue it.`,
        at: location.hash,
      };
      s.branches = r.branches;
      await refreshLists();
      await navigate();
    } catch (err) {
      fail(err);
      render();
    }
  }

  async function send(): Promise<void> {
    const s = state.session;
    const text = state.draft.trim();
    if (!s || text === '' || state.sending || !online()) return;
    state.sending = true;
    render();
    try {
      const r = await state.backend.call('send_message', {
        session_id: s.id,
        content: text,
        continue_from: s.view?.continue_from ?? null,
      });
      state.draft = '';
      if (r.project) state.projectTurns.set(s.id, r.project);
      else state.projectTurns.delete(s.id);
      const target = sessionHref(s.id, r.commit ?? undefined, r.branch ?? undefined);
      state.notice = r.branch_created
        ? { kind: 'info', text: `Your message started branch ${r.branch}.`, at: target }
        : null;
      await refreshLists();
      state.sending = false;
      if (location.hash === target) await navigate();
      else location.hash = target;
    } catch (err) {
      fail(err);
      state.sending = false;
      render();
    }
  }

  async function save(): Promise<void> {
    const s = state.session;
    if (!s || !online()) return;
    state.save = { sessionId: s.id, status: 'running', nodes: 0 };
    render();
    try {
      const report = await saveForOffline(state.backend, await localStore(), s.id, (nodes) => {
        state.save = { sessionId: s.id, status: 'running', nodes };
        render();
      });
      state.save = { sessionId: s.id, status: 'done', report };
    } catch (err) {
      const e = shownError(err);
      state.save = { sessionId: s.id, status: 'failed', message: `${e.text} (${e.code}: ${e.detail})` };
    }
    await refreshLists();
  }

  async function createProject(): Promise<void> {
    const f = state.newProject;
    const sessionId = f.withSession && state.route.page === 'session' ? state.route.id : undefined;
    f.busy = true;
    f.error = null;
    render();
    try {
      const p = await state.backend.call('create_project', {
        workdir: f.workdir.trim(),
        name: f.name.trim(),
        ...(sessionId ? { session_id: sessionId } : {}),
      });
      state.newProject = blankProjectForm();
      const target = sessionId ? location.hash : projectHref(p.id);
      state.notice = {
        kind: 'info',
        text: `Project ${p.name} created (${p.repo === 'created' ? 'git init in' : p.repo === 'reused' ? 'reusing the git repository of' : 'no git available for'} ${p.workdir}).`,
        at: target,
      };
      await refreshLists();
      if (!sessionId) location.hash = target;
      else await navigate();
    } catch (err) {
      f.busy = false;
      const e = shownError(err);
      f.error = { text: e.text, detail: `${e.code}: ${e.detail}` };
      render();
    }
  }

  async function addToProject(projectId: string, sessionId: string): Promise<void> {
    try {
      await state.backend.call('add_session_to_project', { project_id: projectId, session_id: sessionId });
      await refreshLists();
      await navigate();
    } catch (err) {
      fail(err);
      render();
    }
  }

  async function setStatus(projectId: string, status: ProjectStatus): Promise<void> {
    if (state.project) state.project.busy = true;
    render();
    try {
      const p = await state.backend.call('set_project_status', { project_id: projectId, status });
      state.notice = {
        kind: 'info',
        text: `${p.name} is now ${p.status}${p.status === 'active' ? ': the agent’s edits are auto-committed again.' : ': the agent’s edits are not auto-committed.'}`,
        at: location.hash,
      };
      await refreshLists();
      await navigate();
    } catch (err) {
      fail(err);
      if (state.project) state.project.busy = false;
      render();
    }
  }

  /** The dry run (apply false) or the import itself. */
  async function importProjects(apply: boolean): Promise<void> {
    const f = state.importForm;
    f.busy = true;
    f.error = null;
    render();
    try {
      f.plan = await state.backend.call('import_projects', { dir: f.dir.trim(), apply });
      if (apply) {
        const n = f.plan.candidates.filter((c) => c.status === 'created').length;
        state.notice = {
          kind: 'info',
          text: `Imported ${n === 1 ? '1 project' : `${n} projects`} from ${f.plan.dir}.`,
          at: location.hash,
        };
        await refreshLists();
      }
    } catch (err) {
      const e = shownError(err);
      f.error = { text: e.text, detail: `${e.code}: ${e.detail}` };
    }
    f.busy = false;
    render();
  }

  const step = (dir: 'prev' | 'next') => {
    const v = state.route.page === 'session' ? state.session?.view : null;
    const sha = v?.[dir];
    if (!v || !sha || state.loading) return;
    location.hash = sessionHref(state.session!.id, sha, v.branch);
  };
  bindReplayKeys(document, { prev: () => step('prev'), next: () => step('next'), send: () => void send() });

  // ---- rendering ----

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
    const focused =
      document.activeElement instanceof HTMLElement ? (document.activeElement.dataset.testid ?? null) : null;
    const r = state.route;
    const current = r.page === 'session' ? r.id : null;
    replace(
      sidebar,
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
        saving: state.save?.status === 'running',
        draft: state.draft,
        sending: state.sending,
        projectTurn: state.projectTurns.get(s.id),
        projectStatus: project && online() ? state.projectStatus.get(project.id) : undefined,
        saveReport: state.save?.sessionId === s.id ? renderSave(state.save) : null,
        on: {
          rerender: render,
          showAll: () => void navigate(),
          makeHead: (b) => void makeHead(b),
          save: () => void save(),
          send: () => void send(),
          draft: (t) => {
            state.draft = t;
          },
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
    const again = focused ? root.querySelector<HTMLElement>(`[data-testid="${focused}"]`) : null;
    if (again && !(again as HTMLButtonElement).disabled) again.focus({ preventScroll: true });
    else if (focused === 'prev' || focused === 'next')
      main.querySelector<HTMLElement>('[data-testid=turn]')?.focus({ preventScroll: true });
    if (turnKey !== null) {
      placeTurn(main, turnKey !== scrolledTo);
      scrolledTo = turnKey;
    }
    // For the replay-app bench and tests: the page is drawn (and laid out, by placeTurn) for this state.
    if (!state.loading) root.dispatchEvent(new CustomEvent('replay:rendered', { detail: { turn: turnKey } }));
  }

  window.addEventListener('hashchange', () => void navigate());

  if (__SERVICE_WORKER__ && 'serviceWorker' in navigator) {
    void navigator.serviceWorker
      .register('./sw.js')
      .then(() => navigator.serviceWorker.ready)
      .then(
        () => {
          state.appCached = true;
          render();
        },
        () => undefined,
      );
  }

  await refreshLists();
  await navigate();
}
