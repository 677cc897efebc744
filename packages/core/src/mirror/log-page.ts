// One page of a branch's log (`Mirror.log` with `page`): the chain's ids from the commit-graph and
// only the page's commits read (replay-log.ts reads whole logs).
import { EntityGitError, parseCommit } from '@entity-git/git';
import type { MirrorContext } from './context.js';
import type { CommitInfo, LogPage, LogPageRequest } from './mirror.js';
import { chainLog, commitGraph, copied, graphChain, keptLogs } from './replay-log.js';
import { commitInfo, type Repo } from './repo/repo.js';

/** The most commits one page of the log holds. */
export const MAX_LOG_PAGE = 10_000;

const badPage = (message: string, param: string): never => {
  throw new EntityGitError('INVALID_ARGUMENT', message, { param });
};

/** `page` checked as {@link LogPageRequest} says (before anything is read); `INVALID_ARGUMENT` otherwise. */
export function checkLogPage(page: unknown): LogPageRequest {
  if (typeof page !== 'object' || page === null || Array.isArray(page))
    return badPage('page must be an object { offset, limit }', 'page');
  const { offset, limit } = page as Record<string, unknown>;
  if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0)
    return badPage('page.offset must be an integer ≥ 0', 'offset');
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LOG_PAGE)
    return badPage(`page.limit must be an integer from 1 to ${MAX_LOG_PAGE}`, 'limit');
  return { offset, limit };
}

/** Out of range: past the last commit (an empty log takes offset 0 only). */
function inRange(page: LogPageRequest, total: number): void {
  if (page.offset >= Math.max(total, 1))
    badPage(`page.offset ${page.offset} is past the log's ${total} commits`, 'offset');
}

/** The page of a whole log (`INVALID_ARGUMENT` past its end). */
export function logSlice(log: readonly CommitInfo[], page: LogPageRequest): LogPage {
  inRange(page, log.length);
  const commits = log.slice(page.offset, page.offset + page.limit).map(copied);
  return { total: log.length, offset: page.offset, commits };
}

/**
 * One page of the log from `tip` (newest first) and its length: commits not in the commit-graph
 * read one by one, down to the graph; the graph's first-parent chain gives the rest's ids and the
 * count, and only the page's commits are read (one batch). A log kept already is sliced; without
 * a graph, past an octopus edge, or where graph and objects disagree, the whole log is read and
 * sliced. The page is `page` checked ({@link checkLogPage}).
 */
export async function pagedLog(ctx: MirrorContext, repo: Repo, tip: string, page: LogPageRequest): Promise<LogPage> {
  const kept = keptLogs(ctx);
  const whole = async () => logSlice(await chainLog(ctx, repo, tip), page);
  const graph = await commitGraph(ctx, repo);
  if (graph === null) return whole();
  const above: CommitInfo[] = [];
  const seen = new Set<string>();
  let sha: string | undefined = tip;
  while (sha !== undefined && !seen.has(sha) && graph.positionOf(sha) < 0) {
    const known = kept.get(`${repo.gitdir}\0${sha}`);
    if (known?.every((c) => !seen.has(c.sha))) return logSlice(above.concat(known), page);
    seen.add(sha);
    const c = parseCommit(await repo.objects.readTyped(sha, 'commit'));
    above.push(commitInfo(sha, c));
    sha = c.parents[0];
  }
  if (sha === undefined) return logSlice(above, page);
  if (seen.has(sha)) return whole(); // a cycle: as the walk reads it
  const chain = graphChain(graph, sha);
  const last = graph.positionOf(chain.at(-1)!);
  if (graph.firstParent(last) !== -1) return whole(); // an octopus edge below, or a cycle above
  const total = above.length + chain.length;
  inRange(page, total);
  const end = Math.min(total, page.offset + page.limit);
  const commits = above.slice(page.offset, end);
  const from = Math.max(page.offset, above.length) - above.length;
  const ids = chain.slice(from, Math.max(from, end - above.length));
  const read = new Array<CommitInfo>(ids.length);
  await repo.objects.forEachTyped(ids, 'commit', (i, content) => {
    read[i] = commitInfo(ids[i]!, parseCommit(content));
  });
  for (let i = 0; i < read.length; i++) if (read[i]!.parents[0] !== chain[from + i + 1]) return whole();
  return { total, offset: page.offset, commits: commits.map(copied).concat(read) };
}
