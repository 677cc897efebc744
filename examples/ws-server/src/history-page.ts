// `git_history` with paging: given `offset` or `limit`, only that page of the branch's timeline
// (newest first) and the branch's turn count (`total`), read by core's paged `Mirror.log` (the
// count from the commit-graph, only the page's commits read); without either, core's own
// `git_history` (the whole timeline). The replay app opens a long session with one page.
import {
  idParam,
  intParam,
  optionalString,
  paramsObject,
  requireSession,
  type DagSource,
  type HistoryResult,
  type Mirror,
  timelineCommit,
} from '@entity-git/core';
import type { HistoryPageResult } from './protocol.js';

/** Commits in a page when only `offset` is given. */
export const DEFAULT_HISTORY_PAGE = 200;
/** The most commits one page holds (core's `Mirror.log` page limit). */
export const MAX_HISTORY_PAGE = 10_000;

export function historyAction(
  dag: DagSource,
  mirror: Mirror,
  whole: (params: { session_id: string; branch?: string }) => Promise<HistoryResult>,
): (params: unknown) => Promise<HistoryResult | HistoryPageResult> {
  return async (params) => {
    const p = paramsObject(params);
    if ((p.offset === undefined || p.offset === null) && (p.limit === undefined || p.limit === null))
      return whole(p as { session_id: string });
    const sessionId = idParam(p, 'session_id');
    const branch = optionalString(p, 'branch');
    const offset = intParam(p, 'offset', { fallback: 0, min: 0 });
    const limit = intParam(p, 'limit', { fallback: DEFAULT_HISTORY_PAGE, min: 1, max: MAX_HISTORY_PAGE });
    await requireSession(dag, sessionId);
    const name = branch ?? (await mirror.branches(sessionId).catch(() => [])).find((b) => b.head)?.name ?? null;
    if (name === null) return { session_id: sessionId, branch: null, commits: [], total: 0, offset: 0 };
    const page = await mirror.log(sessionId, { branch: name, page: { offset, limit } });
    const commits = page.commits.map(timelineCommit);
    return { session_id: sessionId, branch: name, commits, total: page.total, offset: page.offset };
  };
}
