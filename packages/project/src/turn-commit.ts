import { classify, ownersOf, skip, userBefore, type UserBefore } from './decision.js';
import type { Turn } from './input.js';
import { toRepoPath } from './paths.js';
import type { PendingEdit } from './project-coordination.js';
import type { ProjectGitContext } from './project-git-context.js';
import type { FileState, RepoState } from './project-git-engine.js';
import type { AfterTurnResult, ProjectCommit, RecoveredCommit } from '@entity-git/core';
import { UNCOMMITTED_CHANGES_WARNING } from './project-git-types.js';
import type { OpenRepository } from './turn-repository.js';

/** The agent's paths and the ignored ones as far as an attempt got: what a `repository-locked` skip reports. */
export interface Seen {
  mine: readonly string[];
  ignored: readonly string[];
}

/** What the check of the tools' reported bytes found. */
interface Written {
  /** The agent's files that hold other bytes than the tools reported: edited during the turn by someone else. */
  editedDuring: string[];
  /** The agent's files that hold the reported bytes: what the commit expects; undefined when nothing was checked. */
  expectMine: FileState[] | undefined;
  /** `mine` hashed, when the check did it. */
  hashedMine: FileState[] | null;
}

/**
 * The decision on an open repository and the commits it allows: pending edits first, oldest
 * first, then this turn's; or the skip (and the pending record) when something blocks.
 */
export async function commitTurn(
  ctx: ProjectGitContext,
  t: Turn,
  { repo, j }: OpenRepository,
  { recovered, seen }: { recovered: readonly RecoveredCommit[]; seen: Seen },
): Promise<AfterTurnResult> {
  const ignoredPaths: string[] = [];
  const touched = new Set<string>();
  for (const p of t.touched) {
    const r = toRepoPath(p, t.workdir, repo.root, repo.prefix);
    if (r === null) ignoredPaths.push(p);
    else touched.add(r);
  }
  const changes = await ctx.engine.status(repo);
  const before = userBefore(t, repo);
  // A path an interrupted commit's recovery left staged is the user's staging, whatever the snapshot says.
  const staged = new Set(recovered.flatMap((r) => r.userPaths));
  const { mine, others, inSubmodules } = classify(changes, touched, before, staged);
  seen.mine = mine;
  seen.ignored = ignoredPaths;
  const written = await checkWritten(ctx, t, repo, mine);
  if (inSubmodules.length > 0) {
    return skip(
      'submodule-changes',
      `the agent edited files inside the submodule ${inSubmodules.join(', ')}, its edits won't be auto-committed`,
      { agentPaths: mine, ignoredPaths },
    );
  }

  // A change the agent did not make this turn is still an agent's if it holds the exact bytes
  // of a pending edit (another session whose turn ended first, or an earlier blocked turn).
  const pending = ctx.freshPending(j);
  const current = await ctx.currentOfPending(
    repo,
    others.filter((c) => !c.conflicted && !c.submodule).map((c) => c.path),
    pending,
  );
  const owners = ownersOf(pending, current);
  const userPaths = [
    ...others.filter((c) => c.conflicted || c.submodule || !owners.has(c.path)).map((c) => c.path),
    ...written.editedDuring,
  ].sort();

  if (userPaths.length > 0) {
    await recordPending(ctx, t, { repo, j }, { pending, mine, hashedMine: written.hashedMine, before });
    return skip('uncommitted-changes', UNCOMMITTED_CHANGES_WARNING, { userPaths, agentPaths: mine, ignoredPaths });
  }
  if (mine.length > 0 && before === null && ctx.withoutSnapshot === 'skip') {
    return skip(
      'no-snapshot',
      `no snapshot of the working tree was taken before the turn, the agent's edits won't be auto-committed`,
      { agentPaths: mine, ignoredPaths },
    );
  }

  // Nothing of the user's is uncommitted: land the pending edits, oldest first, then this turn's.
  const landed = await landPending(ctx, { repo, j }, { pending, owners });
  const done =
    mine.length === 0
      ? null
      : await ctx.commitFiles(landed.repo, j, {
          who: { ...t, at: ctx.now() },
          paths: mine,
          expect: written.expectMine,
        });
  if (done === null)
    return Object.freeze({
      status: 'skipped' as const,
      reason: 'nothing-to-commit' as const,
      warning: null,
      deferred: landed.deferred,
      ignoredPaths,
    });
  return Object.freeze({
    status: 'committed' as const,
    commit: done.commit,
    branch: done.branch,
    sessionId: t.sessionId,
    turn: t.turn,
    paths: done.entries.map((f) => f.path),
    deferred: landed.deferred,
    ignoredPaths,
  });
}

/**
 * The bytes the tools reported: a file of the agent's that holds others now was edited during the
 * turn by someone else (the user), and is theirs — taken out of `mine`, in place.
 */
async function checkWritten(ctx: ProjectGitContext, t: Turn, repo: RepoState, mine: string[]): Promise<Written> {
  const editedDuring: string[] = [];
  if (t.written.length === 0 || mine.length === 0) return { editedDuring, expectMine: undefined, hashedMine: null };
  const reported = new Map<string, string | null>();
  for (const [p, oid] of t.written) {
    const r = toRepoPath(p, t.workdir, repo.root, repo.prefix);
    if (r !== null) reported.set(r, oid);
  }
  const expectMine: FileState[] = [];
  const hashedMine = await ctx.engine.hashPaths(repo, mine);
  for (const f of hashedMine) {
    if (!reported.has(f.path)) continue;
    if (f.oid === reported.get(f.path)) expectMine.push(f);
    else editedDuring.push(f.path);
  }
  if (editedDuring.length > 0) mine.splice(0, mine.length, ...mine.filter((p) => !editedDuring.includes(p)));
  return { editedDuring, expectMine, hashedMine };
}

/** A blocked turn's edits kept as pending (when the snapshot, or the `trust-touched` option, says they are the agent's). */
async function recordPending(
  ctx: ProjectGitContext,
  t: Turn,
  { repo, j }: OpenRepository,
  s: { pending: PendingEdit[]; mine: string[]; hashedMine: FileState[] | null; before: UserBefore | null },
): Promise<void> {
  const { pending, mine } = s;
  if (mine.length === 0 || (s.before === null && ctx.withoutSnapshot !== 'trust-touched')) return;
  const files = s.hashedMine?.filter((f) => mine.includes(f.path)) ?? (await ctx.engine.hashPaths(repo, mine));
  const kept = pending
    .map((e) => ({ ...e, files: e.files.filter((f) => !mine.includes(f.path)) }))
    .filter((e) => e.files.length > 0);
  await ctx.writePending(j, [
    ...kept,
    {
      sessionId: t.sessionId,
      turn: t.turn,
      subject: t.subject,
      model: t.model,
      sessionCommit: t.sessionCommit,
      at: ctx.now(),
      files,
    },
  ]);
}

/** The pending edits committed, oldest first, each of the files it owns; the journal emptied of them. */
async function landPending(
  ctx: ProjectGitContext,
  { repo: start, j }: OpenRepository,
  { pending, owners }: { pending: readonly PendingEdit[]; owners: ReadonlyMap<string, number> },
): Promise<{ repo: RepoState; deferred: ProjectCommit[] }> {
  let repo = start;
  const deferred: ProjectCommit[] = [];
  for (let i = 0; i < pending.length; i++) {
    const e = pending[i]!;
    const files = e.files.filter((f) => owners.get(f.path) === i);
    if (files.length === 0) continue;
    const done = await ctx.commitFiles(repo, j, { who: e, paths: files.map((f) => f.path), expect: files });
    if (done === null) continue;
    repo = { ...repo, head: done.commit };
    deferred.push(
      Object.freeze({
        commit: done.commit,
        branch: done.branch,
        sessionId: e.sessionId,
        turn: e.turn,
        paths: done.entries.map((f) => f.path),
      }),
    );
    await ctx.writePending(j, pending.slice(i + 1));
  }
  if (pending.length > 0) await ctx.writePending(j, []);
  return { repo, deferred };
}
