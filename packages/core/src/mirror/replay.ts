import { EntityGitError, type CommitGraph, isOid, parseCommit, fromUtf8 } from '@entity-git/git';
import { parseTrailers } from '../model/commit-message.js';
import type { DagNode, JsonValue } from '../model/types.js';
import type { MirrorContext } from './context.js';
import type { BranchInfo, CommitInfo, LogPage, LogPageRequest, TurnView } from './mirror.js';
import { chainLog, commitGraph } from './replay-log.js';
import { LIVE_STATES, remember } from './repo/state.js';
import type { SessionId } from './session-id.js';
import { messageEntries, openExisting, readCommitTree, walk, type Repo } from './repo/repo.js';

/** A commit's place on a branch: turn N of M, and its neighbours there. */
type Position = { turn: number; turns: number; prev: string | null; next: string | null };

/**
 * Turn N of M for `commit` on the first-parent chain from `tip`, both in the commit-graph: the
 * chain walked by graph position (no object read, no id made but the neighbours'), a commit's turn
 * its generation. Null when either is not in the graph, when the commit is not on the chain, or
 * when the chain's generations do not count its turns one by one (the caller then walks it).
 */
function onChain(graph: CommitGraph, tip: string, commit: string): Position | null {
  const top = graph.positionOf(tip);
  const at = top < 0 ? -1 : graph.positionOf(commit);
  if (at < 0) return null;
  const turns = graph.generation(top);
  const turn = graph.generation(at);
  // A generation drops by one at least per step down: past turns - turn steps, it is not there.
  let p = top;
  let child = -1;
  let steps = 0;
  for (; p !== at; steps++) {
    const q = graph.firstParent(p);
    if (steps >= turns - turn || q === null || q < 0) return null;
    child = p;
    p = q;
  }
  const parent = graph.firstParent(at);
  // By exactly one at every step, down to a root at 1: a linear history, its turns counted.
  if (steps !== turns - turn || parent === null || parent < 0 !== (turn === 1)) return null;
  return { turn, turns, prev: parent >= 0 ? graph.oidAt(parent) : null, next: child >= 0 ? graph.oidAt(child) : null };
}

/** The repository and a branch's tip (default: HEAD's); null before the first turn. */
async function branchTip(
  ctx: MirrorContext,
  sessionId: SessionId,
  options: { branch?: string },
): Promise<{ repo: Repo; tip: string } | null> {
  const repo = await openExisting(ctx, sessionId);
  const branch = options.branch ?? (await repo.refs.headBranch());
  if (branch === null) return null;
  const tip = await repo.refs.resolve(`refs/heads/${branch}`);
  if (tip === null) {
    if (options.branch !== undefined)
      throw new EntityGitError(
        'BRANCH_NOT_FOUND',
        `session ${JSON.stringify(sessionId)} has no branch ${JSON.stringify(branch)}`,
        { sessionId, branch },
      );
    return null;
  }
  return { repo, tip };
}

/** The commits of a branch (default: HEAD's), newest first, following first parents. */
export async function log(
  ctx: MirrorContext,
  sessionId: SessionId,
  options: { branch?: string } = {},
): Promise<CommitInfo[]> {
  const at = await branchTip(ctx, sessionId, options);
  return at === null ? [] : chainLog(ctx, at.repo, at.tip);
}

/** One page of that log and its length (replay-log.ts, `pagedLog`); the page is checked first. */
export async function logPage(
  ctx: MirrorContext,
  sessionId: SessionId,
  options: { branch?: string; page: LogPageRequest },
): Promise<LogPage> {
  const { checkLogPage, logSlice, pagedLog } = await ctx.onDemand();
  const page = checkLogPage(options.page);
  const at = await branchTip(ctx, sessionId, options);
  return at === null ? logSlice([], page) : pagedLog(ctx, at.repo, at.tip, page);
}

/** Every branch with its tip, `main` first. */
export async function branches(ctx: MirrorContext, sessionId: SessionId): Promise<BranchInfo[]> {
  const repo = await openExisting(ctx, sessionId);
  const head = await repo.refs.headBranch();
  const out: BranchInfo[] = [];
  for (const name of await repo.refs.branches()) {
    const commit = await repo.refs.resolve(`refs/heads/${name}`);
    if (commit === null) continue;
    const c = parseCommit(await repo.objects.readTyped(commit, 'commit'));
    out.push({ name, commit, turns: parseTrailers(c.message)?.turn ?? 0, head: name === head });
  }
  return out.sort((a, b) =>
    a.name === 'main' ? -1 : b.name === 'main' ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
}

/** The session as it stood at `commit`, from objects alone. */
export async function read(
  ctx: MirrorContext,
  sessionId: SessionId,
  commit: string,
  options: { branch?: string } = {},
): Promise<TurnView> {
  if (!isOid(commit))
    throw new EntityGitError('COMMIT_NOT_FOUND', `not a commit id (40 hex digits): ${JSON.stringify(commit)}`, {
      commit,
    });
  const repo = await openExisting(ctx, sessionId);
  const all = await branches(ctx, sessionId);
  const order =
    options.branch !== undefined
      ? all.filter((b) => b.name === options.branch)
      : [...all.filter((b) => b.head), ...all.filter((b) => !b.head)];
  if (options.branch !== undefined && order.length === 0)
    throw new EntityGitError(
      'BRANCH_NOT_FOUND',
      `session ${JSON.stringify(sessionId)} has no branch ${JSON.stringify(options.branch)}`,
      { sessionId, branch: options.branch },
    );
  for (const b of order) {
    const found = await position(ctx, repo, b.commit, commit);
    if (found === null) continue;
    const root = await readCommitTree(repo.objects, commit);
    let messages: DagNode[] = [];
    const messagesTree = root.find((e) => e.name === 'messages');
    if (messagesTree) {
      const entries = await messageEntries(repo, messagesTree.oid);
      messages = new Array<DagNode>(entries.length);
      await repo.objects.forEachTyped(
        entries.map((e) => e.oid),
        'blob',
        (i, bytes) => {
          messages[i] = JSON.parse(fromUtf8(bytes)) as DagNode;
        },
      );
    }
    messages.sort((x, y) => x.seq - y.seq);
    const metaEntry = root.find((e) => e.name === 'meta.json');
    const meta = metaEntry
      ? (JSON.parse(fromUtf8(await repo.objects.readTyped(metaEntry.oid, 'blob'))) as JsonValue)
      : null;
    return { sessionId, commit, branch: b.name, ...found, messages, meta };
  }
  throw new EntityGitError(
    'COMMIT_NOT_FOUND',
    `commit ${commit} is on no branch of session ${JSON.stringify(sessionId)}`,
    { sessionId, commit },
  );
}

/**
 * Where `commit` sits on the first-parent chain from `tip`: turn N of M, and its neighbours.
 * Walks from the tip down to the commit only, when the trailers agree with the walk (they do in
 * every repository the mirror wrote); else walks the whole chain. Null when it is not there.
 */
async function position(ctx: MirrorContext, repo: Repo, tip: string, commit: string): Promise<Position | null> {
  // The chain below a tip never changes: what one read walked, the next one starts from.
  const key = `${repo.gitdir}\0${tip}`;
  let walked = ctx.cache.chains.get(key);
  if (walked === undefined) walked = { links: [], index: new Map(), done: false };
  remember(ctx.cache.chains, key, walked, LIVE_STATES);
  const { links, index } = walked;
  const graph = walked.done || index.has(commit) ? null : await commitGraph(ctx, repo);
  const direct = graph === null ? null : onChain(graph, tip, commit);
  if (direct !== null) return direct;
  while (!index.has(commit) && !walked.done) {
    const sha = links.length === 0 ? tip : links.at(-1)!.parent;
    if (sha === null || index.has(sha)) {
      walked.done = true;
      break;
    }
    // In the commit-graph, the rest of the chain is read from it, not from each commit object:
    // positions, first parents and generations (a commit's turn, on the mirror's linear history).
    const before = links.length;
    for (let p = graph?.positionOf(sha) ?? -1, oid = sha; graph && p >= 0; ) {
      const parent = graph.firstParent(p);
      if (parent === null) break; // an octopus merge: read from its object below
      const parentOid = parent >= 0 ? graph.oidAt(parent) : null;
      index.set(oid, links.length);
      links.push({ sha: oid, parent: parentOid, turn: graph.generation(p) });
      if (parentOid === null || index.has(parentOid)) break;
      oid = parentOid;
      p = parent;
    }
    if (links.length > before) continue;
    const c = parseCommit(await repo.objects.readTyped(sha, 'commit'));
    index.set(sha, links.length);
    links.push({ sha, parent: c.parents[0] ?? null, turn: parseTrailers(c.message)?.turn ?? null });
  }
  const at = index.get(commit);
  if (at === undefined) return null;
  const link = links[at]!;
  const tipTurn = links[0]!.turn;
  // Turn N of M from the trailers when they agree with the chain (they do in every repository
  // the mirror wrote); else counted along the whole chain.
  if (
    tipTurn !== null &&
    link.turn !== null &&
    tipTurn - link.turn === at &&
    (link.parent === null) === (link.turn === 1)
  ) {
    return { turn: link.turn, turns: tipTurn, prev: link.parent, next: at > 0 ? links[at - 1]!.sha : null };
  }
  const chain = (await walk(repo, tip)).reverse();
  const i = chain.findIndex((x) => x.sha === commit);
  return {
    turn: chain[i]!.turn ?? i + 1,
    turns: chain.length,
    prev: i > 0 ? chain[i - 1]!.sha : null,
    next: i + 1 < chain.length ? chain[i + 1]!.sha : null,
  };
}
