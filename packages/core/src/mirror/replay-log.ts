// A branch's log for replay: the first-parent chain read from the commit-graph and its commit
// objects read in one batch (a read per span of a pack, not one per commit), cached by tip (the
// history below a commit never changes; a new tip reuses the log kept of an older one). Without a
// graph, or where it does not agree with the objects, the commits are walked one by one as before.
// A page of the log is log-page.ts's.
import { CommitGraph, COMMIT_GRAPH_PATH, joinPath, parseCommit } from '@entity-git/git';
import type { MirrorContext } from './context.js';
import type { CommitInfo } from './mirror.js';
import { fileId, sameFile } from './repo/cache.js';
import { LIVE_STATES, remember } from './repo/state.js';
import { commitInfo, walk, type Repo } from './repo/repo.js';

/** Logs kept per mirror, by repository and tip: the most recently read. */
const LOGS_KEPT = 16;
const logs = new WeakMap<MirrorContext, Map<string, readonly CommitInfo[]>>();

/** The repository's commit-graph, read once while the file stays the same; null when there is none this reader takes. */
export async function commitGraph(ctx: MirrorContext, repo: Repo): Promise<CommitGraph | null> {
  const path = joinPath(repo.gitdir, COMMIT_GRAPH_PATH);
  const st = await ctx.store.lstat(path);
  if (st === null) return null;
  const cached = ctx.cache.graphs.get(repo.gitdir);
  if (cached && sameFile(cached.id, st)) return cached.graph;
  const data = await ctx.store.read(path);
  const graph = data === null ? null : CommitGraph.parse(data, ctx.store.codec);
  remember(ctx.cache.graphs, repo.gitdir, { id: fileId(st), graph }, LIVE_STATES);
  return graph;
}

/** The commit ids from `tip` down first parents as the graph has them; empty when the tip is not in it. */
export function graphChain(graph: CommitGraph, tip: string): string[] {
  const out: string[] = [];
  for (let p = graph.positionOf(tip); p >= 0; ) {
    out.push(graph.oidAt(p));
    const parent = graph.firstParent(p);
    if (parent === null) break; // an octopus edge: the rest is walked from the objects
    p = parent;
  }
  return out;
}

/**
 * The log from `from` (in the graph) down: its commits read in one batch; past an octopus edge
 * walked on. Null when the graph and the objects disagree on a first parent.
 */
async function fromGraph(
  repo: Repo,
  graph: CommitGraph,
  from: string,
  seen: Set<string>,
): Promise<CommitInfo[] | null> {
  const chain = graphChain(graph, from);
  const out = new Array<CommitInfo>(chain.length);
  await repo.objects.forEachTyped(chain, 'commit', (i, content) => {
    out[i] = commitInfo(chain[i]!, parseCommit(content));
  });
  for (let i = 0; i + 1 < out.length; i++) if (out[i]!.parents[0] !== chain[i + 1]) return null;
  for (const sha of chain) seen.add(sha);
  const below = out.at(-1)?.parents[0];
  if (below === undefined) return out;
  for (const c of await walk(repo, below)) {
    if (seen.has(c.sha)) break;
    seen.add(c.sha);
    out.push(c);
  }
  return out;
}

/**
 * What `walk(repo, tip)` returns: commits not in the commit-graph (live turns since the last
 * pack) one by one, down to one whose log is kept already or one in the graph, the rest of the
 * chain from there in one batch.
 */
async function readLog(
  ctx: MirrorContext,
  repo: Repo,
  tip: string,
  kept: Map<string, readonly CommitInfo[]>,
): Promise<CommitInfo[]> {
  const graph = await commitGraph(ctx, repo);
  const out: CommitInfo[] = [];
  const seen = new Set<string>();
  for (let sha: string | undefined = tip; sha !== undefined && !seen.has(sha); ) {
    const known = sha === tip ? undefined : kept.get(`${repo.gitdir}\0${sha}`);
    if (known?.every((c) => !seen.has(c.sha))) return out.concat(known);
    if (graph !== null && graph.positionOf(sha) >= 0) {
      const rest = await fromGraph(repo, graph, sha, seen);
      return rest === null ? walk(repo, tip) : out.concat(rest);
    }
    seen.add(sha);
    const c = parseCommit(await repo.objects.readTyped(sha, 'commit'));
    out.push(commitInfo(sha, c));
    sha = c.parents[0];
  }
  return out;
}

/** The logs kept for this mirror, made on first use. */
export function keptLogs(ctx: MirrorContext): Map<string, readonly CommitInfo[]> {
  let kept = logs.get(ctx);
  if (kept === undefined) logs.set(ctx, (kept = new Map()));
  return kept;
}

/** The caller's to change: fresh objects each time. */
export const copied = (c: CommitInfo): CommitInfo => ({ ...c, parents: [...c.parents] });

/** The commits from `tip` down its first parents, tip first, as {@link walk} lists them; cached by tip. */
export async function chainLog(ctx: MirrorContext, repo: Repo, tip: string): Promise<CommitInfo[]> {
  const kept = keptLogs(ctx);
  const key = `${repo.gitdir}\0${tip}`;
  let log = kept.get(key);
  if (log === undefined) log = await readLog(ctx, repo, tip, kept);
  remember(kept, key, log, LOGS_KEPT);
  return log.map(copied);
}
