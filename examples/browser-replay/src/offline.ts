// "Save for offline": the session's DAG rows come from the server (export_session, paged) and go
// into IndexedDB as they are, a transaction a page (not one a row); a copy of the server's repository
// (`GET /repo/<session>`) is written into this browser's LightningFS beside them — offline replay
// reads that copy at once. Then, in the background, core's mirror commits the rows again here
// (the same code as the server's mirror, in memory) and the report says whether every branch
// came out at the server's commit id. A server without the route: the rows are committed into
// the browser's own repository instead, as before, and compared the same way.
import { createMirror, isEntityGitError, memoryStorage, type Mirror, type Session } from '@entity-git/core';
import type { BranchSummary } from 'ws-server/protocol';
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
  nodes: number;
  session: Session;
  serverBranches: BranchSummary[];
  /** The server's repository was copied (else the browser's own mirror committed the rows). */
  copied: boolean;
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
 * The rows into IndexedDB and the repository copy into LightningFS: the session is replayable
 * offline once this returns. Call {@link checkRebuilt} after it for the report.
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
  let session: Session | null = null;
  let serverBranches: BranchSummary[] = [];
  let nodes = 0;
  // Each page goes into IndexedDB (one transaction) while the next one is read; the row itself,
  // head included, with the last.
  let imported: Promise<unknown> = Promise.resolve();
  for (let after: number | null = 0; after !== null; ) {
    const page: Awaited<ReturnType<typeof server.call<'export_session'>>> = await server.call('export_session', {
      session_id: sessionId,
      after_seq: after,
      limit: PAGE,
    });
    if (session === null) {
      session = page.session;
      serverBranches = page.branches;
    }
    const row = session;
    after = page.next_after_seq;
    const last = after === null;
    imported = Promise.all([imported, opening]).then(([, local]) =>
      local.dag.importSessionRows(row, page.nodes, { takeRow: last }),
    );
    imported.catch(() => undefined);
    nodes += page.nodes.length;
    onProgress?.(nodes);
  }
  if (session === null) throw new Error('no session');
  const local = await opening;

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

  // The rows exactly as the server has them (project_id included: it is in meta.json, so in every commit id).
  await imported;
  const files = await repo?.catch(() => null);
  if (files) {
    await writeCopy(local, sessionId, files);
    const rebuilt = createMirror({ dag: local.dag, storage: memoryStorage(), root: CHECK_ROOT });
    return { sessionId, nodes, session, serverBranches, copied: true, rebuilt };
  }
  // No copy to be had: the browser's own mirror commits the rows (slow on a long session).
  await local.mirror.sync(sessionId);
  return { sessionId, nodes, session, serverBranches, copied: false, rebuilt: local.mirror };
}

/** The rows committed again in this browser, each branch's id compared with the server's. */
export async function checkRebuilt(server: Backend, copy: SavedCopy): Promise<SaveReport> {
  const { sessionId, session, serverBranches } = copy;
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
  return { sessionId, nodes: copy.nodes, branches, equal, metaChanged };
}
