// Reading what the page shows from the backend: the sidebar's lists, a session (on a step within the
// branch on screen, only a window of its turns), where its branches leave main, a project, and the
// project's workdir status, and the files the turn on screen changed there. `navigate` loads what
// the hash names, then re-renders.
import type { TimelineCommit } from 'ws-server/protocol';
import { ActionError, localStore } from './backend.js';
import { shownError } from './errors.js';
import { forkOf, type BranchFork } from './branch-labels.js';
import { parseRoute, type Route, type State } from './app-state.js';
import { EARLIER_SHOWN, type SessionPage } from './session-page.js';
import { openHistory } from './history-pages.js';
import { loadUsage } from './usage-view.js';
import { loadSearch } from './search-view.js';

/** The first read of the rest of a timeline waits this long after the page is drawn, ms. */
const REST_AFTER = 100;

/** Branches whose fork point is read (one history each): past this many, the rest keep their names. */
const LABELLED_BRANCHES = 12;

export interface LoadingDeps {
  state: State;
  /** Marked `data-loading` while a page loads. */
  main: HTMLElement;
  online: () => boolean;
  fail: (err: unknown) => void;
  render: () => void;
}

export function createLoading({ state, main, online, fail, render }: LoadingDeps) {
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

  /** The session's agent commits in its project (online only): which turns' edits an undo can take back. */
  async function readAgentCommits(sessionId: string): Promise<void> {
    const projectId = state.sessions.find((s) => s.id === sessionId)?.project_id;
    if (!projectId || !online()) {
      state.agentCommits.delete(sessionId);
      return;
    }
    try {
      state.agentCommits.set(sessionId, await state.backend.call('project_agent_commits', { session_id: sessionId }));
    } catch {
      state.agentCommits.delete(sessionId);
    }
  }

  /**
   * The files the turn on screen changed in its project (online, in a project): read at every step,
   * a diff left open while the turn stays the same. A turn without snapshots (it ran before the
   * project kept them) says so instead; a server that keeps none gets no panel.
   */
  async function readTurnFiles(): Promise<void> {
    const s = state.session;
    const v = s?.view ?? null;
    const projectId = state.sessions.find((x) => x.id === s?.id)?.project_id;
    if (!s || v === null || !projectId || !online()) {
      state.turnFiles = null;
      return;
    }
    const prev = state.turnFiles;
    const at = { sessionId: s.id, commit: v.commit, turn: v.turn };
    const open = prev?.sessionId === s.id && prev.commit === v.commit ? prev.open : null;
    try {
      const list = await state.backend.call('list_turn_files', { session_id: s.id, turn: v.turn });
      state.turnFiles = { ...at, status: 'ready', list, open };
    } catch (err) {
      const e = shownError(err);
      // Its refusal is an INVALID_ARGUMENT whose message alone says why.
      const keepsNone = e.code === 'INVALID_ARGUMENT' && /keeps no shadow snapshots/.test(e.detail);
      state.turnFiles = keepsNone
        ? null
        : {
            ...at,
            status: e.code === 'SNAPSHOT_NOT_FOUND' ? 'none' : 'failed',
            list: null,
            text: e.text,
            detail: `${e.code}: ${e.detail}`,
            open: null,
          };
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

  /**
   * The messages of the turns from after `older` to `c`, from the DAG; null when the commit names
   * no node, or offline when the turn's rows are not in this browser yet (a save still copying
   * them: the caller reads the repository instead, as for a commit of no node).
   */
  async function windowOf(sessionId: string, c: TimelineCommit, older: TimelineCommit | undefined) {
    const b = state.backend;
    if (c.node === null || c.seq === null) return null;
    try {
      const { messages } = await b.call('turn_messages', {
        session_id: sessionId,
        to_node: c.node,
        to_seq: c.seq,
        from_seq: older?.seq ?? 0,
      });
      return messages;
    } catch (err) {
      if (b.mode === 'offline' && err instanceof ActionError && err.code === 'NODE_NOT_FOUND') return null;
      throw err;
    }
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
      // The commit's page, its neighbours' and the earlier turns' drawn (read if not yet).
      const i = prev.pages ? await prev.pages.indexOf(r.sha) : commits.findIndex((c) => c?.sha === r.sha);
      if (prev.pages && i >= 0) await prev.pages.ensure(i - 1, i + 2 + EARLIER_SHOWN);
      if (prev.pages && prev.showAll) await prev.pages.ensureAll();
      const c = commits[i];
      const older = commits[i + 1 + EARLIER_SHOWN];
      const messages = c && c.turn !== null && !prev.showAll ? await windowOf(r.id, c, older) : null;
      if (c && messages !== null && c.turn !== null) {
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
    // The branches asked for alongside the log (neither needs the other): one round trip less.
    const listed = b.call('git_branches', { session_id: r.id });
    listed.catch(() => undefined);
    // The turn count and the newest page of the timeline; older pages when the turn shown needs them.
    let pages = await openHistory(b, r.id, r.branch);
    let history = pages.history;
    const sha = r.sha ?? history.commits[0]?.sha;
    let view: SessionPage['view'] = null;
    let notLoaded = 0;
    const i = sha === undefined ? -1 : await pages.indexOf(sha);
    if (i >= 0) await pages.ensure(i - 1, i + 2 + EARLIER_SHOWN);
    if (prev?.showAll) await pages.ensureAll();
    const c = history.commits[i];
    // On the branch read: a window of turns from the DAG, as a step does.
    const older = history.commits[i + 1 + EARLIER_SHOWN];
    const messages =
      c && c.turn !== null && history.branch !== null && !prev?.showAll ? await windowOf(r.id, c, older) : null;
    if (c && messages !== null && c.turn !== null && history.branch !== null) {
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
      if (view.branch !== history.branch) {
        pages = await openHistory(b, r.id, view.branch);
        history = pages.history;
      }
    }
    const { branches } = await listed;
    const forks = await loadForks(r.id, branches, prev?.forks ?? new Map()).catch(
      () => new Map<string, BranchFork | null>(),
    );
    const rest = pages;
    setTimeout(() => rest.readRest(), REST_AFTER);
    state.session = {
      id: r.id,
      history,
      pages,
      view,
      branches,
      forks,
      collapsed: prev?.collapsed ?? new Set(),
      showAll: prev?.showAll ?? false,
      notLoaded,
      // The figures read before stay on screen until the new ones are in (no flicker after a send).
      ...(prev?.stats ? { stats: prev.stats } : {}),
    };
    void loadUsage(b, state.session, () => state.session, render);
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

  /** The page the hash names, read and drawn; the narrow drawer closes unless `keepDrawer` (nobody picked a page). */
  async function navigate({ keepDrawer = false } = {}): Promise<void> {
    state.route = parseRoute(location.hash);
    if (!keepDrawer) state.drawerOpen = false;
    // A banner of another page is stale here.
    if (state.notice?.at !== undefined && state.notice.at !== location.hash) state.notice = null;
    state.loading = true;
    main.dataset.loading = 'true';
    try {
      if (state.route.page === 'session') {
        if (state.session?.id !== state.route.id) state.draft = '';
        if (state.save && state.save.sessionId !== state.route.id) state.save = null;
        const id = state.route.id;
        // The agent commits are read when a session opens (a walk down the project's history) and
        // after a write (a message, an undo, a pushed turn): a step moves nothing there.
        const opened = state.session?.id !== id || !state.agentCommits.has(id);
        if (state.undo?.sessionId !== id) state.undo = null;
        if (state.restore?.sessionId !== id) state.restore = null;
        await loadSession(state.route);
        await Promise.all([
          readProjectStatus(state.sessions.find((s) => s.id === id)?.project_id),
          opened ? readAgentCommits(id) : null,
          readTurnFiles(),
        ]);
      } else {
        state.session = null;
        state.turnFiles = null;
      }
      if (state.route.page === 'project') await loadProject(state.route.id);
      else state.project = null;
      const r = state.route;
      state.search = r.page === 'search' ? await loadSearch(state.backend, r.query, r.allBranches) : null;
    } catch (err) {
      fail(err);
      if (state.route.page === 'session') state.session = null;
    }
    state.loading = false;
    render();
  }

  return { refreshLists, readProjectStatus, readAgentCommits, navigate };
}
