// The app started: its state, the connection (or, without one, the sessions saved in this browser),
// and its parts wired together: loading.ts reads what the page shows, actions.ts is behind the
// controls, render.ts draws it all (app-state.ts holds the state and the route).
import { createActions } from './actions.js';
import { parseRoute, takeToken, type State } from './app-state.js';
import { connect, localStore, type Backend } from './backend.js';
import { shownError } from './errors.js';
import { blankImportForm } from './import-view.js';
import { bindReplayKeys } from './keyboard.js';
import { createLoading } from './loading.js';
import { buildShell, createRender } from './render.js';
import { blankProjectForm } from './sidebar-view.js';

export { abbreviate } from './format.js';

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
    agentCommits: new Map(),
    undo: null,
    turnFiles: null,
    restore: null,
    draft: '',
    sending: false,
    appCached: false,
    loading: false,
    drawerOpen: false,
    search: null,
  };

  // Nothing to draw but the shell until the renderer exists, once the connection is made.
  let render: () => void = () => undefined;
  const shell = buildShell(root, state, () => render());

  const online = () => state.backend.mode === 'online';

  const listen = (b: Backend) =>
    b.onEvent?.((e) => {
      if (e.event !== 'project_turn') return;
      state.projectTurns.set(e.session_id, e.result);
      void Promise.all([readProjectStatus(e.result.project_id), readAgentCommits(e.session_id)]).then(render);
    });

  const goOffline = async (text: string) => {
    state.backend = (await localStore()).backend;
    state.notice = { kind: 'warn', text };
    state.projectStatus.clear();
    state.agentCommits.clear();
    await refreshLists();
    await navigate({ keepDrawer: true });
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

  const { refreshLists, readProjectStatus, readAgentCommits, navigate } = createLoading({
    state,
    main: shell.main,
    online,
    fail,
    render: () => render(),
  });
  const actions = createActions({
    state,
    online,
    fail,
    render: () => render(),
    refreshLists,
    navigate,
    readProjectStatus,
    readAgentCommits,
  });
  const { step, send } = actions;
  bindReplayKeys(document, { prev: () => step('prev'), next: () => step('next'), send: () => void send() });

  render = createRender({ root, state, shell, online, navigate, actions });

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
  // A drawer opened while the app was starting stays open: the user asked for it.
  await navigate({ keepDrawer: true });
}
