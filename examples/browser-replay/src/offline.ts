// "Save for offline": the session's DAG rows come from the server (export_session, paged), go
// into IndexedDB as they are, and the browser mirror commits them — the same core code as the
// server's mirror, so the commit ids must come out equal. The report says whether they did.
import { importRows } from '@entity-git/browser-fs';
import { isEntityGitError, type DagNode, type Session } from '@entity-git/core';
import type { BranchSummary } from 'ws-server/protocol';
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

const PAGE = 1000;

export async function saveForOffline(
  server: Backend,
  local: LocalStore,
  sessionId: string,
  onProgress?: (nodes: number) => void,
): Promise<SaveReport> {
  const nodes: DagNode[] = [];
  let session: Session | null = null;
  let serverBranches: BranchSummary[] = [];
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
    nodes.push(...page.nodes);
    onProgress?.(nodes.length);
    after = page.next_after_seq;
  }
  if (session === null) throw new Error('no session');

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

  // The row exactly as the server has it (project_id included: it is in meta.json, so in every commit id).
  await importRows({ into: local.dag, session, nodes });
  await local.mirror.sync(sessionId);
  const mine = await local.mirror.branches(sessionId);

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
  return { sessionId, nodes: nodes.length, branches, equal, metaChanged };
}
