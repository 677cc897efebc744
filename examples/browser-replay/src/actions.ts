// The user's actions: each calls the backend, sets a notice (or a form's error), refreshes what it
// changed and re-renders; `step` moves the replay one turn (the keys, as the buttons do).
import type { ProjectStatus } from 'ws-server/protocol';
import type { State } from './app-state.js';
import { localStore } from './backend.js';
import { shownError } from './errors.js';
import { projectHref, sessionHref } from './format.js';
import { checkRebuilt, copyForOffline } from './offline.js';
import { labelOf } from './session-page.js';
import { blankProjectForm } from './sidebar-view.js';

export interface ActionDeps {
  state: State;
  online: () => boolean;
  fail: (err: unknown) => void;
  render: () => void;
  refreshLists: () => Promise<void>;
  navigate: () => Promise<void>;
  readProjectStatus: (projectId: string | null | undefined) => Promise<void>;
  readAgentCommits: (sessionId: string) => Promise<void>;
}

let undoCount = 0;
let restoreCount = 0;

export function createActions(deps: ActionDeps) {
  const { state, online, fail, render, refreshLists, navigate } = deps;
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
      await deps.readAgentCommits(s.id);
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
    const mine = () => state.save?.sessionId === s.id;
    try {
      const copy = await copyForOffline(state.backend, localStore(), s.id, (nodes) => {
        const now = state.save;
        if (!mine() || now === null) return;
        // The rows go on into IndexedDB after the copy is usable: the count moves in either phase.
        if (now.status === 'running' || now.status === 'checking') state.save = { ...now, nodes };
        render();
      });
      // Replayable offline from here; the rows' copy and the check run on behind the report.
      if (mine())
        state.save = {
          sessionId: s.id,
          status: 'checking',
          nodes: state.save?.status === 'running' ? state.save.nodes : 0,
          branches: copy.serverBranches.length,
          copied: copy.copied,
        };
      render();
      await refreshLists();
      const report = await checkRebuilt(state.backend, copy);
      if (mine()) state.save = { sessionId: s.id, status: 'done', report };
    } catch (err) {
      const e = shownError(err);
      if (mine()) state.save = { sessionId: s.id, status: 'failed', message: `${e.text} (${e.code}: ${e.detail})` };
    }
    await refreshLists();
  }

  async function createProject(): Promise<void> {
    const f = state.newProject;
    const sessionId = f.withSession && state.route.page === 'session' ? state.route.id : undefined;
    const from = state.sessions.find((s) => s.id === sessionId)?.project_id ?? null;
    f.error = null;
    if (sessionId && from !== null && !f.moveConfirmed) {
      f.confirm = { kind: 'move', from: state.projects.find((p) => p.id === from)?.name ?? from };
      return render();
    }
    f.busy = true;
    render();
    try {
      const p = await state.backend.call('create_project', {
        workdir: f.workdir.trim(),
        name: f.name.trim(),
        ...(sessionId ? { session_id: sessionId } : {}),
        ...(f.initRepo ? { init_repo: true } : {}),
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
      if (e.code === 'NOT_A_REPOSITORY') f.confirm = { kind: 'init', workdir: f.workdir.trim() };
      else f.error = { text: e.text, detail: `${e.code}: ${e.detail}` };
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

  /** Undo the agent's commit of the turn on screen (its session commit `sessionCommit`); the outcome is shown in the turn. */
  async function undoTurn(commit: string, sessionCommit: string): Promise<void> {
    const s = state.session;
    if (!s || !online() || state.undo?.status === 'running') return;
    const undo = { id: ++undoCount, sessionId: s.id, sessionCommit, commit };
    state.undo = { ...undo, status: 'running', text: 'Undoing the agent’s edits of this turn…' };
    render();
    try {
      const r = await state.backend.call('revert_agent_turn', { session_id: s.id, commit });
      state.undo = { ...undo, status: 'done', kind: r.kind, text: r.message };
      // The replay head's "Agent commit …" of the last turn would now say what is no longer so.
      const last = state.projectTurns.get(s.id);
      if (last?.status === 'committed' && last.commit.sha === commit) state.projectTurns.delete(s.id);
    } catch (err) {
      const e = shownError(err);
      state.undo = { ...undo, status: 'refused', text: `Not undone. ${e.text}`, detail: `${e.code}: ${e.detail}` };
    }
    const projectId = state.sessions.find((x) => x.id === s.id)?.project_id;
    await Promise.all([deps.readProjectStatus(projectId), deps.readAgentCommits(s.id)]);
    render();
  }

  /** Open one file's diff in the files panel (or close it when it is the one open). */
  async function openDiff(path: string): Promise<void> {
    const t = state.turnFiles;
    if (!t) return;
    if (t.open?.path === path) {
      t.open = null;
      return render();
    }
    const open: NonNullable<typeof t.open> = { path, diff: null };
    t.open = open;
    render();
    try {
      const r = await state.backend.call('turn_file_diff', { session_id: t.sessionId, turn: t.turn, path });
      open.diff = r.diff;
    } catch (err) {
      const e = shownError(err);
      open.error = `${e.text} (${e.code}: ${e.detail})`;
    }
    render();
  }

  /** Put the files turn `turn` (session commit `commit`) changed back to before it; the outcome is shown in the turn. */
  async function restoreFiles(turn: number, commit: string): Promise<void> {
    const s = state.session;
    const busy = state.restore?.status === 'running' || state.restore?.status === 'undoing';
    if (!s || !online() || busy || state.sending) return;
    const base = { id: ++restoreCount, sessionId: s.id, commit, turn, undo: null };
    state.restore = { ...base, status: 'running', result: null };
    render();
    try {
      const result = await state.backend.call('restore_turn_files', { session_id: s.id, turn });
      state.restore = { ...base, status: 'done', result };
    } catch (err) {
      const e = shownError(err);
      state.restore = { ...base, status: 'failed', result: null, text: e.text, detail: `${e.code}: ${e.detail}` };
    }
    await deps.readProjectStatus(state.sessions.find((x) => x.id === s.id)?.project_id);
    render();
  }

  /** Undo the last restore: the paths it put back return to what they were just before it. */
  async function undoRestore(): Promise<void> {
    const r = state.restore;
    if (!r || r.result === null || !online() || state.sending) return;
    if (r.status !== 'done' && r.status !== 'undo-failed') return;
    state.restore = { ...r, status: 'undoing', text: undefined, detail: undefined };
    render();
    try {
      const undo = await state.backend.call('undo_restore_turn_files', {
        session_id: r.sessionId,
        restored: r.result.restored,
      });
      state.restore = { ...r, status: 'undone', undo };
    } catch (err) {
      const e = shownError(err);
      state.restore = { ...r, status: 'undo-failed', text: e.text, detail: `${e.code}: ${e.detail}` };
    }
    await deps.readProjectStatus(state.sessions.find((x) => x.id === r.sessionId)?.project_id);
    render();
  }

  const step = (dir: 'prev' | 'next') => {
    const v = state.route.page === 'session' ? state.session?.view : null;
    const sha = v?.[dir];
    if (!v || !sha || state.loading) return;
    location.hash = sessionHref(state.session!.id, sha, v.branch);
  };

  return {
    makeHead,
    send,
    save,
    createProject,
    addToProject,
    setStatus,
    importProjects,
    undoTurn,
    openDiff,
    restoreFiles,
    undoRestore,
    step,
  };
}

export type Actions = ReturnType<typeof createActions>;
