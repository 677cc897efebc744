import {
  EntityGitError,
  ObjectStore,
  parseCommit,
  parseTree,
  type ParsedCommit,
  type TreeEntry,
  RefStore,
  joinPath,
} from '@entity-git/git';
import { parseTrailers } from '../../model/commit-message.js';
import { sessionDirName } from '../../model/names.js';
import { immutableMeta } from '../../model/session-meta.js';
import type { CommitInfo } from '../mirror.js';
import type { SessionId } from '../session-id.js';
import type { RepoContext } from './context.js';

/** A session's repository: its directories and the stores of its objects and refs. */
export interface Repo {
  sessionId: SessionId;
  dir: string;
  gitdir: string;
  objects: ObjectStore;
  refs: RefStore;
}

// meta.json holds the immutable fields only: a commit id never depends on when the row changed.
export const metaOf = immutableMeta;

/** The directory of a session's repository under the context's root. */
export function repoPath(ctx: Pick<RepoContext, 'root'>, sessionId: SessionId): string {
  return joinPath(ctx.root, sessionDirName(sessionId));
}

/** A session's repository, whether or not it exists yet: its refs move under the context's locks. */
export function openRepo(ctx: RepoContext, sessionId: SessionId): Repo {
  const dir = repoPath(ctx, sessionId);
  const gitdir = joinPath(dir, '.git');
  return {
    sessionId,
    dir,
    gitdir,
    objects: new ObjectStore(ctx.store, gitdir),
    refs: new RefStore(ctx.store, gitdir, ctx.lock),
  };
}

/** Whether the repository exists: its `HEAD`, written last when it is made, is there. */
export async function repoExists(ctx: RepoContext, repo: Repo): Promise<boolean> {
  return (await ctx.store.lstat(joinPath(repo.gitdir, 'HEAD'))) !== null;
}

/** A session's repository, which must exist (`SESSION_NOT_FOUND` otherwise). */
export async function openExisting(ctx: RepoContext, sessionId: SessionId): Promise<Repo> {
  const repo = openRepo(ctx, sessionId);
  if (!(await repoExists(ctx, repo))) {
    throw new EntityGitError(
      'SESSION_NOT_FOUND',
      `session ${JSON.stringify(sessionId)} has no repository under ${ctx.root}`,
      { sessionId },
    );
  }
  return repo;
}

/** The root tree of a commit: its entries. */
export async function readCommitTree(objects: ObjectStore, commit: string): Promise<TreeEntry[]> {
  return parseTree(await objects.readTyped(parseCommit(await objects.readTyped(commit, 'commit')).tree, 'tree'));
}

/** The message files of a `messages/` tree, by path under it, in either layout. */
export async function messageEntries(repo: Repo, messagesTree: string): Promise<TreeEntry[]> {
  // Shard trees read all at once: each is a chain of deltas read link by link, a read a link.
  const top = parseTree(await repo.objects.readTyped(messagesTree, 'tree'));
  const shards = await Promise.all(top.map((e) => (e.mode === '40000' ? repo.objects.readTyped(e.oid, 'tree') : null)));
  const out: TreeEntry[] = [];
  top.forEach((e, k) => {
    const shard = shards[k];
    if (!shard) out.push(e);
    else for (const f of parseTree(shard)) out.push({ ...f, name: `${e.name}/${f.name}` });
  });
  return out;
}

/** A parsed commit as `log` reports it: subject, message and its Turn/Node/Seq trailers. */
export function commitInfo(sha: string, c: ParsedCommit): CommitInfo {
  const t = parseTrailers(c.message);
  return {
    sha,
    parents: c.parents,
    time: c.time,
    subject: c.message.split('\n', 1)[0]!,
    message: c.message,
    turn: t?.turn ?? null,
    node: t?.node ?? null,
    seq: t?.seq ?? null,
  };
}

/** The commits from `tip` down its first parents, tip first (a commit seen before ends the walk). */
export async function walk(repo: Repo, tip: string): Promise<CommitInfo[]> {
  const out: CommitInfo[] = [];
  const seen = new Set<string>();
  for (let sha: string | undefined = tip; sha !== undefined && !seen.has(sha); ) {
    seen.add(sha);
    const c = parseCommit(await repo.objects.readTyped(sha, 'commit'));
    out.push(commitInfo(sha, c));
    sha = c.parents[0];
  }
  return out;
}
