// "Save for offline": the session's row, then a copy of the server's repository (`GET
// /repo/<session>`) written into this browser's LightningFS — offline replay reads the repository,
// so the copy is usable from there — then the session's DAG rows from the server (export_session,
// paged) into IndexedDB as they are, a transaction a page. Then, in the
// background, core's mirror commits the rows again here (the same code as the server's mirror, in
// memory) and the report says whether every branch came out at the server's commit id. A server
// without the route: the rows are committed into the browser's own repository instead, as
// before, and compared the same way.
import { createMirror, isEntityGitError, type Mirror, type Session } from '@entity-git/core';
import { memoryStorage } from '@entity-git/git';
import type { BranchSummary, ExportSessionResult } from 'ws-server/protocol';
import { decodeRepoBundle, type RepoFile } from 'ws-server/repo-bundle';
import type { Backend, LocalStore } from './backend.js';

export interface BranchComparison {
  name: string;
  server: string | null;
  browser: string | null;
  equal: boolean;
}

export interface SaveReport {
  sessionId: string;
  nodes: number;
  branches: BranchComparison[];
  /** Every branch on both sides, at the same commit. */
  equal: boolean;
  /**
   * Set when they differ because the server's commits carry an older meta.json than today's
   * session row (a title changed, or the session joined a project after those turns): core keeps
   * commits as they were made, a rebuild from the rows commits today's meta.json.
   */
  metaChanged: boolean;
}

const PAGE = 2000;
/** Where the background check commits the rows again (in memory, not in the saved copy). */
const CHECK_ROOT = '/check';

/** What "Save for offline" has done once the copy is in this browser, before the check. */
export interface SavedCopy {
  sessionId: string;
  session: Session;
  serverBranches: BranchSummary[];
  /** The server's repository was copied (else the browser's own mirror committed the rows). */
  copied: boolean;
  /**
   * The rows' copy into IndexedDB: settles with their number once all are in (the session's head
   * set last). Still running when a repository was copied: replay offline reads the repository.
   */
  rows: Promise<number>;
  /** The mirror whose branches the check compares: rebuilt from the rows in this browser. */
  rebuilt: Mirror;
}

async function mkdirs(fs: LocalStore['mirror']['storage']['fs'], made: Set<string>, dir: string): Promise<void> {
  if (dir === '' || dir === '/' || made.has(dir)) return;
  await mkdirs(fs, made, dir.slice(0, dir.lastIndexOf('/')));
  try {
    await fs.mkdir(dir);
  } catch (err) {
    if ((err as { code?: string }).code !== 'EEXIST') throw err;
  }
  made.add(dir);
}

/** The server's repository files written under the session's .git here; branches the copy lacks are removed. */
async function writeCopy(local: LocalStore, sessionId: string, files: RepoFile[]): Promise<void> {
  const { fs } = local.mirror.storage;
  const gitdir = `${local.mirror.repoPath(sessionId)}/.git`;
  const made = new Set<string>();
  const heads = await fs.readdir(`${gitdir}/refs/heads`).catch(() => [] as string[]);
  for (const name of heads)
    if (!files.some((f) => f.path === `refs/heads/${name}`))
      await fs.unlink(`${gitdir}/refs/heads/${name}`).catch(() => undefined);
  for (const f of files) {
    const path = `${gitdir}/${f.path}`;
    await mkdirs(fs, made, path.slice(0, path.lastIndexOf('/')));
    await fs.writeFile(path, f.data);
  }
  await local.mirror.storage.flush?.();
}

/**
 * The session's rows, page by page from the server (`export_session`), into IndexedDB, a
 * transaction a page, each page read while the one before is written; the row's head taken with
 * the last page (never before the node it names is in). Settles with the number of rows.
 */
async function copyRows(
  server: Backend,
  local: LocalStore,
  first: ExportSessionResult,
  onProgress?: (nodes: number) => void,
): Promise<number> {
  const sessionId = first.session.id;
  let nodes = 0;
  let written: Promise<unknown> = Promise.resolve();
  for (let page = first; ; ) {
    const after = page.next_after_seq;
    const last = after === null;
    const { session } = page;
    const rows = page.nodes;
    written = written.then(async () => {
      await local.dag.importSessionRows(session, rows, { takeRow: last });
      nodes += rows.length;
      onProgress?.(nodes);
    });
    written.catch(() => undefined);
    if (last) break;
    page = await server.call('export_session', { session_id: sessionId, after_seq: after, limit: PAGE });
  }
  await written;
  return nodes;
}

/**
 * The session into this browser: its row first (so it is listed offline), the server's
 * repository into LightningFS — replay offline reads the repository, so the copy is usable once
 * this returns — then the rows into IndexedDB, which go on behind it ({@link SavedCopy.rows}):
 * replay's steps read a window of turns from them, and fall back to the repository for a turn
 * whose rows are not in yet (loading.ts); the check rebuilds the commits from them. Without a
 * repository to copy, the rows are all in and committed here before this returns. Call
 * {@link checkRebuilt} after it for the report.
 */
export async function copyForOffline(
  server: Backend,
  opening: LocalStore | Promise<LocalStore>,
  sessionId: string,
  onProgress?: (nodes: number) => void,
): Promise<SavedCopy> {
  const repo = server.fetchRepo?.(sessionId).then(decodeRepoBundle);
  // Not awaited yet: an unhandled rejection would be reported before the rows are in.
  repo?.catch(() => undefined);
  const first = await server.call('export_session', { session_id: sessionId, after_seq: 0, limit: PAGE });
  const { session, branches: serverBranches } = first;
  const local = await opening;
  // The row alone, head null until the last page is in: listed offline from here.
  await local.dag.importSessionRows(session, [], { takeRow: false });

  // The project too (best effort), so the indicator and the Projects section work offline.
  if (session.project_id !== null) {
    const p = await server.call('project_detail', { project_id: session.project_id }).catch(() => null);
    if (p && (await local.dag.getProject(p.id)) === null) {
      await local.dag
        .createProject({ id: p.id, name: p.name, workdir: p.workdir, description: p.description })
        .catch((err: unknown) => {
          if (!isEntityGitError(err, 'DUPLICATE_PROJECT')) throw err;
        });
      if (p.status !== 'active') await local.dag.setProjectStatus(p.id, p.status).catch(() => undefined);
    }
  }

  // The repository exactly as the server has it; then the rows as it has them (project_id included:
  // it is in meta.json, so in every commit id the check rebuilds).
  const files = await repo?.catch(() => null);
  if (files) {
    await writeCopy(local, sessionId, files);
    // Usable offline from here. The rows follow, not alongside: the page and IndexedDB are the
    // repository's first (measured: copying both at once made the copy usable much later).
    const rows = copyRows(server, local, first, onProgress);
    rows.catch(() => undefined);
    const rebuilt = createMirror({ dag: local.dag, storage: memoryStorage(), root: CHECK_ROOT });
    return { sessionId, session, serverBranches, copied: true, rows, rebuilt };
  }
  // No copy to be had: the rows, then the browser's own mirror commits them (slow on a long session).
  const nodes = await copyRows(server, local, first, onProgress);
  await local.mirror.sync(sessionId);
  return { sessionId, session, serverBranches, copied: false, rows: Promise.resolve(nodes), rebuilt: local.mirror };
}

/** The rows committed again in this browser, each branch's id compared with the server's. */
export async function checkRebuilt(server: Backend, copy: SavedCopy): Promise<SaveReport> {
  const { sessionId, session, serverBranches } = copy;
  const nodes = await copy.rows;
  if (copy.copied) await copy.rebuilt.sync(sessionId);
  const mine = await copy.rebuilt.branches(sessionId);
  const names = [...new Set([...serverBranches.map((b) => b.name), ...mine.map((b) => b.name)])];
  const branches = names.map((name) => {
    const s = serverBranches.find((b) => b.name === name)?.commit ?? null;
    const b = mine.find((x) => x.name === name)?.commit ?? null;
    return { name, server: s, browser: b, equal: s !== null && s === b };
  });
  const equal = branches.length > 0 && branches.every((b) => b.equal);
  let metaChanged = false;
  const tip = serverBranches.find((b) => b.head) ?? serverBranches[0];
  if (!equal && tip) {
    const view = await server.call('git_checkout', { session_id: sessionId, commit_sha: tip.commit }).catch(() => null);
    const meta = view?.meta as { title?: unknown; project_id?: unknown; model?: unknown } | undefined;
    metaChanged =
      meta !== undefined &&
      (meta.title !== session.title || meta.project_id !== session.project_id || meta.model !== session.model);
  }
  return { sessionId, nodes, branches, equal, metaChanged };
}
