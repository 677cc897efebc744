import { EntityGitError, joinPath, utf8 } from '@entity-git/git';
import { canonicalJson } from '../../model/canonical-json.js';
import { deriveSteps, type Derivation } from '../../model/derive.js';
import type { Session } from '../../model/types.js';
import type { MirrorContext } from '../context.js';
import { HostYield } from '../host-yield.js';
import type { Difference, VerifyOptions, VerifyReport } from '../mirror.js';
import { configReadable, configuredLayout } from '../repo/config.js';
import { withRepoLock } from '../repo/files.js';
import { repoLayout } from '../repo/setup.js';
import type { Known } from '../repo/state.js';
import { metaOf, openRepo, type Repo } from '../repo/repo.js';
import type { SessionId } from '../session-id.js';
import { ingestNode, readSession } from '../sync/ingest.js';
import { freshTips } from './fresh-ids.js';
import { formatAndMetaDifferences } from './meta.js';
import { RepoCheck } from './repo-check.js';
import { checkSynced, dagDigest } from './synced-check.js';
import { unchangedSinceSync } from './unchanged.js';

/** Whether the repository equals the DAG, and where it differs. Writes nothing. */
export async function verify(
  ctx: MirrorContext,
  sessionId: SessionId,
  options: VerifyOptions = {},
): Promise<VerifyReport> {
  const repo = openRepo(ctx, sessionId);
  if (options.quick === true && (await quickCheck(ctx, repo, options.marker)))
    return { sessionId, ok: true, differences: [], unchanged: true };
  const record = options.synced === undefined ? undefined : ctx.synced.get(options.synced);
  if (record !== undefined && record.sessionId === sessionId) {
    // The check after a sync: the repository against what that sync read and built.
    return withRepoLock(ctx.store, repo.gitdir, 'sync.lock', async () => {
      const host = new HostYield(ctx.yieldEveryMs);
      const trusted = await checkSynced(ctx, repo, record, host);
      if (trusted !== null) return trusted;
      const full = await fullCheck(ctx, repo, await readSession(ctx, sessionId));
      const before = dagDigest(record.session, record.derivation);
      if (!full.report.ok && (full.read === null || dagDigest(full.read.session, full.read.derivation) !== before))
        full.report.dagChanged = true;
      return full.report;
    });
  }
  const session = await readSession(ctx, sessionId);
  if ((await ctx.store.lstat(joinPath(repo.gitdir, 'HEAD'))) === null) {
    return { sessionId, ok: false, differences: [{ kind: 'missing-repo', detail: `no repository at ${repo.dir}` }] };
  }
  // Under the sync lock: a sync half done by another caller is not a difference.
  return withRepoLock(ctx.store, repo.gitdir, 'sync.lock', async () => (await fullCheck(ctx, repo, session)).report);
}

/** The fast path (`quick`): the DAG's change marker and the refs are what the last sync recorded. */
async function quickCheck(ctx: MirrorContext, repo: Repo, marker: string | null | undefined): Promise<boolean> {
  // A config git cannot read is a difference the refs do not show: checked on the fast path too.
  const gitConfig = await ctx.store.readText(joinPath(repo.gitdir, 'config'));
  if (!configReadable(gitConfig)) return false;
  return unchangedSinceSync({
    dag: ctx.dag,
    states: ctx.cache.states,
    repo,
    worktree: ctx.store.workTree === true ? ctx.store : null,
    // The state must have been recorded under this mirror's config (layout, identity): another's ids differ.
    config: `${configuredLayout(gitConfig) ?? ctx.layout}|${ctx.identity.name}|${ctx.identity.email}`,
    marker: marker === undefined ? { read: true } : { given: marker },
  });
}

/** The full check's report, and the DAG it read (null: the DAG could not be derived). */
interface FullCheck {
  report: VerifyReport;
  read: { session: Session; derivation: Derivation<Known> } | null;
}

/** The repository against the DAG read whole and derived (under the sync lock). */
async function fullCheck(ctx: MirrorContext, repo: Repo, session: Session): Promise<FullCheck> {
  const { sessionId } = repo;
  const differences: Difference[] = [];
  const report = (): VerifyReport => ({
    sessionId,
    ok: differences.every((d) => d.kind === 'extra-branch'),
    differences,
  });
  // Each step below is short for one session, not a long one's whole check: the host gets turns.
  const host = new HostYield(ctx.yieldEveryMs);
  const derivation = await deriveDag(ctx, { sessionId, session, host }, differences);
  if (derivation === null) return { report: report(), read: null };
  const layout = await repoLayout(ctx, repo);
  const check = new RepoCheck({ ctx, repo, layout, host });
  const names = new Set<string>();
  for (const b of derivation.branches) {
    if (b.complete === 0) continue;
    names.add(b.name);
    await host.due();
    await check.branch(b);
  }
  await host.due();
  await check.besideBranches(names);
  await host.due();
  const head = await check.headBranch();
  if (ctx.store.workTree && head !== null && head === derivation.head) await check.worktree(derivation, head);
  check.headIs(derivation, head, names);
  // The ids themselves, once all else agrees: those a fresh backfill of this DAG writes.
  await host.due();
  if (check.ok) {
    const metaBytes = utf8(canonicalJson(metaOf(session)));
    await check.ids(await freshTips(ctx, repo.objects, { sessionId, layout, metaBytes, derivation }), names);
  }
  await host.due();
  check.differences.push(...(await formatAndMetaDifferences(ctx, repo, session)));
  differences.push(...check.differences);
  return { report: report(), read: { session, derivation } };
}

/** The DAG read whole and derived; null (a `dag-error` added) when it cannot be. */
async function deriveDag(
  ctx: MirrorContext,
  read: { sessionId: SessionId; session: Session; host: HostYield },
  differences: Difference[],
): Promise<Derivation<Known> | null> {
  const { sessionId, session, host } = read;
  const known: Known[] = [];
  try {
    const intake = { sessionId, seen: new Set<string>(), known: new Map<string, Known>() };
    for await (const node of ctx.dag.nodesAfter(sessionId, 0, { batchSize: ctx.batchSize })) {
      await host.due();
      known.push(ingestNode(ctx, intake, node).known);
    }
    return await host.run(deriveSteps(known, session.head));
  } catch (err) {
    if (!(err instanceof EntityGitError)) throw err;
    differences.push({ kind: 'dag-error', detail: err.message });
    return null;
  }
}
