// The app: a sidebar (sessions, Projects, + New Project), a project indicator above the chat,
// the conversation as it stood at one commit, ← prev turn / Turn N / M / next turn →, a branch
// switcher, the timeline (one line per commit), a composer that forks from an old turn, and
// "Save for offline", and the project auto-commit of the last turn sent: the design's warning
// banner above the chat when it was skipped for the user's uncommitted changes, the agent's
// commit when it landed. State lives here; every change re-renders (the app is small).
import { textOf, type DagNode, type JsonValue } from '@entity-git/core';
import type {
  BranchSummary, CheckoutResult, HistoryResult, ProjectDetail, ProjectLogResult, ProjectSummary, ProjectTurnResult, SessionSummary,
} from 'ws-server/protocol';
import { ActionError, connect, localStore, type Backend } from './backend.js';
import { h, replace } from './dom.js';
import { saveForOffline, type SaveReport } from './offline.js';

type Route =
  | { page: 'home' }
  | { page: 'session'; id: string; sha?: string; branch?: string }
  | { page: 'project'; id: string };

type Part = HTMLElement | string | null;

interface SessionPage {
  id: string;
  history: HistoryResult;
  view: CheckoutResult | null;
  branches: BranchSummary[];
}

interface State {
  backend: Backend;
  /** Why we are offline, or what just failed. */
  notice: { kind: 'info' | 'warn' | 'error'; text: string } | null;
  sessions: SessionSummary[];
  projects: ProjectSummary[];
  /** Sessions with a copy in this browser. */
  saved: Set<string>;
  route: Route;
  session: SessionPage | null;
  project: { detail: ProjectDetail; log: ProjectLogResult | null } | null;
  save: { sessionId: string; status: 'running'; nodes: number } | { sessionId: string; status: 'done'; report: SaveReport } | { sessionId: string; status: 'failed'; message: string } | null;
  newProject: { open: boolean; workdir: string; name: string; nameTouched: boolean; withSession: boolean; error: string | null; busy: boolean };
  /** The project auto-commit of the last message sent from this page, per session. */
  projectTurns: Map<string, ProjectTurnResult>;
  draft: string;
  sending: boolean;
  appCached: boolean;
  loading: boolean;
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
  const parts = hash.replace(/^#\/?/, '').split('/').filter((p) => p !== '').map((p) => decodeURIComponent(p));
  if (parts[0] === 's' && parts[1]) {
    const r: Route = { page: 'session', id: parts[1] };
    if (parts[2] === 'c' && parts[3]) r.sha = parts[3];
    if (parts[2] === 'c' && parts[4]) r.branch = parts[4];
    return r;
  }
  if (parts[0] === 'p' && parts[1]) return { page: 'project', id: parts[1] };
  return { page: 'home' };
}

const enc = encodeURIComponent;
const sessionHref = (id: string, sha?: string, branch?: string) => `#/s/${enc(id)}${sha ? `/c/${sha}${branch ? `/${enc(branch)}` : ''}` : ''}`;
const projectHref = (id: string) => `#/p/${enc(id)}`;
const short = (sha: string | null | undefined) => (sha ? sha.slice(0, 7) : '—');
const when = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 16).replace('T', ' ');
const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : /(?:s|sh|ch|x)$/.test(one) ? 'es' : 's'}`;

/** `/home/ada/code/wiki-agent` → `…/code/wiki-agent`. */
export function abbreviate(workdir: string): string {
  const parts = workdir.split(/[\\/]/).filter((p) => p !== '');
  return parts.length <= 2 ? workdir : `…/${parts.slice(-2).join('/')}`;
}

function contentText(content: JsonValue): string {
  const text = textOf(content);
  return text !== '' ? text : JSON.stringify(content, null, 2);
}

function toolCalls(content: JsonValue): string[] {
  if (content === null || typeof content !== 'object' || Array.isArray(content)) return [];
  const calls = (content as { tool_calls?: unknown }).tool_calls;
  return Array.isArray(calls) ? calls.map((c) => String((c as { name?: unknown })?.name ?? 'tool')) : [];
}

/** An error as the app shows it: `CODE: message`. */
function errorText(err: unknown): string {
  const e = err as { code?: string; message?: string };
  return `${e.code ?? 'ERROR'}: ${e.message ?? String(err)}`;
}

/** The New Project form, closed and empty. */
const blankProjectForm = (): State['newProject'] => ({ open: false, workdir: '', name: '', nameTouched: false, withSession: true, error: null, busy: false });

export async function startApp(root: HTMLElement): Promise<void> {
  const state: State = {
    backend: null as unknown as Backend,
    notice: null, sessions: [], projects: [], saved: new Set(), route: parseRoute(location.hash),
    session: null, project: null, save: null,
    newProject: blankProjectForm(),
    projectTurns: new Map(), draft: '', sending: false, appCached: false, loading: false,
  };

  const sidebar = h('aside', { class: 'sidebar', 'data-testid': 'sidebar' });
  const main = h('main', { class: 'main', 'data-testid': 'main' });
  replace(root, sidebar, main);

  const goOffline = async (text: string) => {
    state.backend = (await localStore()).backend;
    state.notice = { kind: 'warn', text };
    await refreshLists();
    await navigate();
  };

  const token = takeToken();
  const conn = await connect(token);
  if (conn.ok) {
    state.backend = conn.backend;
    void conn.closed.then(() => goOffline('The server connection closed. Showing the sessions saved in this browser (read-only).'));
  } else {
    state.backend = (await localStore()).backend;
    state.notice = conn.reason === 'refused'
      ? { kind: 'error', text: 'The server refused this page: the token is missing or wrong (open the link the server printed). Showing the sessions saved in this browser.' }
      : { kind: 'warn', text: 'Offline: the server is unreachable. Showing the sessions saved in this browser (read-only).' };
  }

  const online = () => state.backend.mode === 'online';

  const fail = (err: unknown) => {
    state.notice = { kind: 'error', text: errorText(err) };
  };

  async function refreshLists(): Promise<void> {
    try {
      const [s, p] = await Promise.all([state.backend.call('list_sessions', {}), state.backend.call('list_projects', {})]);
      state.sessions = s.sessions;
      state.projects = p.projects;
    } catch (err) {
      fail(err);
    }
    const local = await localStore().catch(() => null);
    state.saved = new Set(local ? await local.dag.listSessions().catch(() => []) : []);
    render();
  }

  async function loadSession(r: Extract<Route, { page: 'session' }>): Promise<void> {
    const b = state.backend;
    let history = await b.call('git_history', r.branch ? { session_id: r.id, branch: r.branch } : { session_id: r.id });
    const sha = r.sha ?? history.commits[0]?.sha;
    let view: CheckoutResult | null = null;
    if (sha) {
      view = await b.call('git_checkout', history.branch ? { session_id: r.id, commit_sha: sha, branch: history.branch } : { session_id: r.id, commit_sha: sha });
      if (view.branch !== history.branch) history = await b.call('git_history', { session_id: r.id, branch: view.branch });
    }
    const { branches } = await b.call('git_branches', { session_id: r.id });
    state.session = { id: r.id, history, view, branches };
  }

  async function loadProject(id: string): Promise<void> {
    const detail = await state.backend.call('project_detail', { project_id: id });
    const log = online() ? await state.backend.call('project_log', { project_id: id }).catch(() => null) : null;
    state.project = { detail, log };
  }

  async function navigate(): Promise<void> {
    state.route = parseRoute(location.hash);
    state.loading = true;
    render();
    try {
      if (state.route.page === 'session') {
        if (state.session?.id !== state.route.id) state.draft = '';
        if (state.save && state.save.sessionId !== state.route.id) state.save = null;
        await loadSession(state.route);
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

  async function switchBranch(name: string): Promise<void> {
    const s = state.session;
    if (!s) return;
    try {
      const r = await state.backend.call('git_switch_branch', { session_id: s.id, branch: name });
      const tip = r.branches.find((b) => b.name === name);
      await refreshLists();
      location.hash = sessionHref(s.id, tip?.commit, name);
    } catch (err) {
      fail(err);
      render();
    }
  }

  async function send(): Promise<void> {
    const s = state.session;
    const text = state.draft.trim();
    if (!s || text === '' || state.sending) return;
    state.sending = true;
    render();
    try {
      const r = await state.backend.call('send_message', { session_id: s.id, content: text, continue_from: s.view?.continue_from ?? null });
      state.draft = '';
      if (r.project) state.projectTurns.set(s.id, r.project);
      else state.projectTurns.delete(s.id);
      state.notice = r.branch_created ? { kind: 'info', text: `Your message started branch ${r.branch}.` } : null;
      await refreshLists();
      location.hash = sessionHref(s.id, r.commit ?? undefined, r.branch ?? undefined);
    } catch (err) {
      fail(err);
    }
    state.sending = false;
    render();
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
      state.save = { sessionId: s.id, status: 'failed', message: errorText(err) };
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
      const p = await state.backend.call('create_project', { workdir: f.workdir.trim(), name: f.name.trim(), ...(sessionId ? { session_id: sessionId } : {}) });
      state.newProject = blankProjectForm();
      state.notice = { kind: 'info', text: `Project ${p.name} created (${p.repo === 'created' ? 'git init in' : p.repo === 'reused' ? 'reusing the git repository of' : 'no git available for'} ${p.workdir}).` };
      await refreshLists();
      if (!sessionId) location.hash = projectHref(p.id);
      else await navigate();
    } catch (err) {
      f.busy = false;
      f.error = err instanceof ActionError ? `${err.code}: ${err.message.replace(/^\[entity-git\] (\[\w+\] )?/, '')}` : String(err);
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

  // ---- rendering ----

  function renderSidebar(): void {
    const current = state.route.page === 'session' ? state.route.id : null;
    const currentProject = state.route.page === 'project' ? state.route.id : state.sessions.find((s) => s.id === current)?.project_id ?? null;
    const f = state.newProject;
    const currentTitle = state.sessions.find((s) => s.id === current)?.title ?? current;
    replace(sidebar,
      h('header', { class: 'brand' }, h('a', { href: '#/' }, 'entity-git'), ' replay'),
      h('div', { class: `mode ${online() ? 'online' : 'offline'}`, 'data-testid': 'mode' }, online() ? '● online' : '○ offline — saved in this browser'),
      h('h2', {}, 'Sessions'),
      state.sessions.length === 0
        ? h('p', { class: 'empty', 'data-testid': 'sessions-empty' }, online() ? 'No sessions yet.' : 'No session saved in this browser yet.')
        : h('ul', { class: 'sessions', 'data-testid': 'sessions' }, state.sessions.map((s) =>
          h('li', {},
            h('a', { href: sessionHref(s.id), class: s.id === current ? 'session current' : 'session', 'data-testid': 'session', 'data-id': s.id },
              h('span', { class: 'title' }, s.title ?? s.id),
              h('small', {}, `${s.branch ?? 'no commit yet'} · ${plural(s.turns, 'turn')}`),
              online() && state.saved.has(s.id) ? h('span', { class: 'badge', title: 'a copy is in this browser' }, 'saved') : null)))),
      h('h2', {}, 'Projects'),
      state.projects.length === 0
        ? h('p', { class: 'empty', 'data-testid': 'projects-empty' }, 'No projects yet.')
        : h('ul', { class: 'projects', 'data-testid': 'projects' }, state.projects.map((p) =>
          h('li', {},
            h('a', { href: projectHref(p.id), class: p.id === currentProject ? 'project current' : 'project', 'data-testid': 'project', 'data-id': p.id },
              h('span', { class: `dot status-${p.status}`, title: p.status, 'data-testid': 'status-dot' }, '●'),
              h('span', { class: 'title' }, p.name),
              h('small', { 'data-testid': 'sessions-count' }, plural(p.sessions_count, 'session')),
              h('small', { class: `status status-${p.status}` }, p.status))))),
      !f.open
        ? h('button', { class: 'link', 'data-testid': 'new-project', disabled: !online(), title: online() ? null : 'projects are created on the server', onclick: () => { f.open = true; render(); } }, '+ New Project')
        : h('form', { class: 'new-project', 'data-testid': 'new-project-form', onsubmit: (e: Event) => { e.preventDefault(); void createProject(); } },
          h('h3', {}, 'New project'),
          h('label', {}, '1. Directory (absolute path on the server’s machine)',
            h('input', { name: 'workdir', required: true, placeholder: '/home/you/code/project', value: f.workdir, oninput: (e: Event) => {
              f.workdir = (e.target as HTMLInputElement).value;
              if (!f.nameTouched) {
                f.name = f.workdir.split(/[\\/]/).filter((x) => x !== '').at(-1) ?? '';
                (sidebar.querySelector('input[name=name]') as HTMLInputElement).value = f.name;
              }
            } })),
          h('label', {}, '2. Name',
            h('input', { name: 'name', required: true, value: f.name, oninput: (e: Event) => { f.name = (e.target as HTMLInputElement).value; f.nameTouched = true; } })),
          h('p', { class: 'hint' }, '3. Its git repository is reused, or created with git init.'),
          current
            ? h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'with-session', checked: f.withSession, onchange: (e: Event) => { f.withSession = (e.target as HTMLInputElement).checked; } }), `4. Add the current session (${currentTitle})`)
            : h('p', { class: 'hint' }, '4. Open a session first to add it (optional).'),
          f.error ? h('p', { class: 'error', 'data-testid': 'new-project-error' }, f.error) : null,
          h('div', { class: 'row' },
            h('button', { type: 'submit', disabled: f.busy, 'data-testid': 'create-project' }, f.busy ? 'Creating…' : 'Create'),
            h('button', { type: 'button', class: 'link', onclick: () => { f.open = false; f.error = null; render(); } }, 'Cancel'))),
      h('footer', { 'data-testid': 'app-cache' }, state.appCached ? 'app cached for offline use' : 'app not cached yet'),
    );
  }

  function renderMessages(messages: DagNode[]): HTMLElement {
    return h('section', { class: 'messages', 'data-testid': 'messages' }, messages.map((m) => {
      const tool = m.role === 'tool' ? String((m.metadata as { tool?: unknown } | null)?.tool ?? 'tool') : null;
      const calls = toolCalls(m.content);
      return h('article', { class: `message role-${m.role}`, 'data-testid': 'message', 'data-role': m.role, 'data-id': m.id },
        h('header', {}, h('span', { class: 'role' }, tool ? `tool · ${tool}` : m.role), h('span', { class: 'seq' }, `#${m.seq}`)),
        h('div', { class: 'content' }, contentText(m.content)),
        calls.length > 0 ? h('div', { class: 'calls' }, `calls: ${calls.join(', ')}`) : null);
    }));
  }

  function renderSave(): HTMLElement | null {
    const s = state.save;
    if (!s || s.sessionId !== state.session?.id) return null;
    if (s.status === 'running') return h('div', { class: 'save running', 'data-testid': 'save-report' }, `Saving… ${plural(s.nodes, 'node')} copied`);
    if (s.status === 'failed') return h('div', { class: 'save failed', 'data-testid': 'save-report' }, `Save for offline failed: ${s.message}`);
    const r = s.report;
    return h('div', { class: `save ${r.equal ? 'equal' : 'differs'}`, 'data-testid': 'save-report' },
      h('p', { 'data-testid': 'save-summary' }, r.equal
        ? `Saved for offline: ${plural(r.nodes, 'node')}, ${plural(r.branches.length, 'branch')} — the commit ids rebuilt in this browser equal the server's ✓`
        : `Saved for offline: ${plural(r.nodes, 'node')} — the commit ids rebuilt in this browser differ from the server's ✗`),
      r.metaChanged ? h('p', { class: 'hint' }, 'The session row changed after those commits (title, model or project): the server keeps its commits as they were made, a rebuild from today’s rows commits today’s meta.json.') : null,
      h('table', { 'data-testid': 'save-table' },
        h('thead', {}, h('tr', {}, h('th', {}, 'branch'), h('th', {}, 'server'), h('th', {}, 'browser'), h('th', {}, ''))),
        h('tbody', {}, r.branches.map((b) => h('tr', { 'data-testid': 'save-row', 'data-branch': b.name, 'data-server': b.server ?? '', 'data-browser': b.browser ?? '' },
          h('td', {}, b.name), h('td', { class: 'sha' }, short(b.server)), h('td', { class: 'sha' }, short(b.browser)), h('td', {}, b.equal ? '✓ equal' : '✗ differs'))))));
  }

  /** Above the chat: what the project auto-commit did with the last turn sent (nothing when it had nothing to do). */
  function renderProjectTurn(sessionId: string): HTMLElement | null {
    const t = state.projectTurns.get(sessionId);
    if (!t) return null;
    const project = state.projects.find((p) => p.id === t.project_id);
    if (t.status === 'committed') {
      return h('div', { class: 'project-turn committed', 'data-testid': 'project-commit', 'data-sha': t.commit.sha },
        h('span', {}, 'Agent commit '), h('span', { class: 'sha' }, short(t.commit.sha)), ` in ${project?.name ?? 'the project'}: `,
        h('span', { class: 'subject', 'data-testid': 'project-commit-subject' }, t.commit.subject),
        ' ', h('a', { href: projectHref(t.project_id), class: 'link' }, 'project history →'));
    }
    if (t.status === 'failed') return h('div', { class: 'project-turn failed', 'data-testid': 'project-turn-failed' }, `The project auto-commit failed: ${t.code}: ${t.message}`);
    if (t.warning === null) return null;
    // The design's sentence, word for word (the ⚠ is drawn by CSS, outside the text).
    return h('div', { class: 'project-warning', role: 'alert', 'data-testid': 'project-warning', 'data-reason': t.reason, title: t.user_paths.length > 0 ? `your uncommitted changes: ${t.user_paths.join(', ')}` : null }, t.warning);
  }

  function renderSession(s: SessionPage): Part[] {
    const summary = state.sessions.find((x) => x.id === s.id);
    const project = summary?.project_id ? state.projects.find((p) => p.id === summary.project_id) : undefined;
    const v = s.view;
    const branch = v?.branch ?? s.history.branch;
    const indicator = project
      ? h('a', { class: 'project-indicator', href: projectHref(project.id), 'data-testid': 'project-indicator', title: project.workdir },
        h('span', { class: `dot status-${project.status}` }, '●'), h('strong', {}, project.name), h('span', { class: 'workdir' }, abbreviate(project.workdir)))
      : h('div', { class: 'project-indicator none', 'data-testid': 'project-indicator-none' }, 'No project');
    const old = v !== null && v.next !== null;
    const bar = h('div', { class: 'replay-bar' },
      h('button', { 'data-testid': 'prev', disabled: !v?.prev, onclick: () => { if (v?.prev) location.hash = sessionHref(s.id, v.prev, v.branch); } }, '← prev turn'),
      h('span', { class: 'turn', 'data-testid': 'turn' }, v ? `Turn ${v.turn} / ${v.turns}` : 'No turn yet'),
      h('button', { 'data-testid': 'next', disabled: !v?.next, onclick: () => { if (v?.next) location.hash = sessionHref(s.id, v.next, v.branch); } }, 'next turn →'),
      h('label', { class: 'branch' }, 'branch ',
        h('select', { 'data-testid': 'branch', onchange: (e: Event) => void switchBranch((e.target as HTMLSelectElement).value) },
          s.branches.map((b) => h('option', { value: b.name, selected: b.name === branch }, `${b.name} · ${plural(b.turns, 'turn')}${b.head ? ' (HEAD)' : ''}`)))),
      h('span', { class: 'spacer' }),
      online() ? h('button', { 'data-testid': 'save-offline', disabled: state.save?.status === 'running', onclick: () => void save() }, state.saved.has(s.id) ? 'Save for offline again' : 'Save for offline') : null);
    const timeline = h('aside', { class: 'timeline' },
      h('h3', {}, `Timeline · ${branch ?? '—'} · ${plural(s.history.commits.length, 'commit')}`),
      h('ol', { 'data-testid': 'timeline' }, [...s.history.commits].reverse().map((c) =>
        h('li', { class: c.sha === v?.commit ? 'current' : '' },
          h('a', { href: sessionHref(s.id, c.sha, s.history.branch ?? undefined), 'data-testid': 'commit', 'data-sha': c.sha },
            h('span', { class: 'sha' }, short(c.sha)), ' ', h('span', { class: 'subject' }, c.subject), ' ', h('time', {}, when(c.time)))))));
    const composer = online()
      ? h('form', { class: 'composer', 'data-testid': 'composer', onsubmit: (e: Event) => { e.preventDefault(); void send(); } },
        h('textarea', { name: 'message', rows: 2, placeholder: old ? 'A message from this turn starts a new branch' : 'Continue the conversation', 'data-testid': 'message-input', oninput: (e: Event) => { state.draft = (e.target as HTMLTextAreaElement).value; } }, state.draft),
        h('button', { type: 'submit', 'data-testid': 'send', disabled: state.sending }, state.sending ? 'Sending…' : old ? `Send (fork from turn ${v!.turn})` : 'Send'),
        old ? h('p', { class: 'hint', 'data-testid': 'fork-hint' }, `You are at turn ${v!.turn} of ${v!.turns}: sending forks the conversation here; the turns after it stay on ${v!.branch}.`) : null)
      : h('p', { class: 'hint composer', 'data-testid': 'composer-offline' }, 'Offline copy: replay only. Messages are sent through the server.');
    return [
      indicator,
      h('h1', { 'data-testid': 'session-title' }, summary?.title ?? s.id),
      bar,
      renderSave(),
      renderProjectTurn(s.id),
      h('div', { class: 'columns' }, v ? renderMessages(v.messages) : h('p', { class: 'empty' }, 'This session has no complete turn yet.'), timeline),
      composer,
    ];
  }

  function renderProject(p: { detail: ProjectDetail; log: ProjectLogResult | null }): Part[] {
    const d = p.detail;
    const others = state.sessions.filter((s) => s.project_id !== d.id);
    return [
      h('h1', { 'data-testid': 'project-name' }, h('span', { class: `dot status-${d.status}` }, '●'), ' ', d.name),
      h('dl', { class: 'facts' },
        h('dt', {}, 'status'), h('dd', { 'data-testid': 'project-status' }, d.status),
        h('dt', {}, 'workdir'), h('dd', { 'data-testid': 'project-workdir', class: 'workdir' }, d.workdir),
        d.description ? [h('dt', {}, 'description'), h('dd', {}, d.description)] : null,
        h('dt', {}, 'created'), h('dd', {}, when(d.created_at))),
      h('h3', {}, `Sessions (${d.session_details.length})`),
      h('ul', { class: 'project-sessions', 'data-testid': 'project-sessions' }, d.session_details.map((s) =>
        h('li', {}, h('a', { href: sessionHref(s.id) }, s.title ?? s.id), h('small', {}, ` ${s.branch ?? '—'} · ${plural(s.turns, 'turn')}`)))),
      online() && others.length > 0
        ? h('form', { class: 'row', 'data-testid': 'add-session', onsubmit: (e: Event) => {
          e.preventDefault();
          void addToProject(d.id, ((e.target as HTMLFormElement).elements.namedItem('session') as HTMLSelectElement).value);
        } }, h('select', { name: 'session' }, others.map((s: SessionSummary) => h('option', { value: s.id }, s.title ?? s.id))), h('button', { type: 'submit' }, 'Add session'))
        : null,
      h('h3', {}, 'Commit history'),
      p.log === null
        ? h('p', { class: 'hint' }, online() ? 'Could not read the repository.' : 'The project’s git history is read on the server.')
        : !p.log.repo
          ? h('p', { class: 'hint', 'data-testid': 'project-log' }, 'Not a git repository yet: the agent’s first auto-commit runs git init.')
          : p.log.commits.length === 0
            ? h('p', { class: 'hint', 'data-testid': 'project-log' }, 'A git repository with no commit yet.')
            : h('ol', { class: 'project-log', 'data-testid': 'project-log' }, p.log.commits.map((c) =>
              h('li', { 'data-testid': 'project-log-commit', 'data-sha': c.sha, 'data-agent': String(c.agent) },
                h('span', { class: 'sha' }, short(c.sha)), ' ', c.agent ? h('span', { class: 'badge' }, 'agent') : null, ' ',
                h('span', { class: 'subject' }, c.subject), ' ', h('small', {}, `${c.agent ? c.committer : c.author} · ${when(c.time)}`)))),
      h('p', { class: 'hint' }, 'Abstract memory (journal, wiki) builds on these sessions; it is not part of this example.'),
    ];
  }

  function render(): void {
    renderSidebar();
    const banner = state.notice ? h('div', { class: `notice ${state.notice.kind}`, 'data-testid': 'notice' }, state.notice.text, h('button', { class: 'link', onclick: () => { state.notice = null; render(); } }, '×')) : null;
    let body: Part[];
    if (state.route.page === 'session' && state.session?.id === state.route.id) body = renderSession(state.session);
    else if (state.route.page === 'project' && state.project?.detail.id === state.route.id) body = renderProject(state.project);
    else if (state.loading) body = [h('p', { class: 'empty' }, 'Loading…')];
    else body = [h('p', { class: 'empty', 'data-testid': 'home' }, state.sessions.length > 0 ? 'Pick a session to replay it turn by turn.' : online() ? 'No sessions on the server.' : 'Nothing saved in this browser yet.')];
    main.dataset.loading = String(state.loading);
    replace(main, banner, ...body);
  }

  window.addEventListener('hashchange', () => void navigate());

  if (__SERVICE_WORKER__ && 'serviceWorker' in navigator) {
    void navigator.serviceWorker.register('./sw.js').then(() => navigator.serviceWorker.ready).then(() => {
      state.appCached = true;
      render();
    }, () => undefined);
  }

  await refreshLists();
  await navigate();
}
