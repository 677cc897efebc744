import { EntityGitError, isEntityGitError, readIndex, type IndexEntry, memoryStorage, joinPath } from '@entity-git/git';
import { deriveSteps, type BranchPlan, type Derivation } from '../../model/derive.js';
import type { Session } from '../../model/types.js';
import { createContext, type MirrorContext } from '../context.js';
import { HostYield } from '../host-yield.js';
import { headFileSteps, messagePath } from '../layout.js';
import type { CommitInfo, Difference, Layout, VerifyOptions, VerifyReport } from '../mirror.js';
import { configReadable, configuredLayout } from '../repo/config.js';
import { damageDifferences, inspectRepository } from '../repo/scrub.js';
import { withRepoLock } from '../repo/files.js';
import { repoLayout } from '../repo/setup.js';
import type { Known } from '../repo/state.js';
import { messageEntries, openRepo, readCommitTree, walk, type Repo } from '../repo/repo.js';
import { branches } from '../replay.js';
import { ingestNode, readSession } from '../sync/ingest.js';
import { syncSession } from '../sync/pipeline.js';
import { unchangedSinceSync } from './unchanged.js';
import { verifyFormatAndMeta } from './meta.js';
import { worktreeDamage, worktreeDifferences } from '../worktree-check.js';

/** Whether the repository equals the DAG, and where it differs. Writes nothing. */
export async function verify(
  ctx: MirrorContext,
  sessionId: string,
  options: VerifyOptions = {},
): Promise<VerifyReport> {
  const repo = openRepo(ctx, sessionId);
  // A config git cannot read is a difference the refs do not show: checked on the fast path too.
  const gitConfig = options.quick === true ? await ctx.store.readText(joinPath(repo.gitdir, 'config')) : null;
  // The state must have been recorded under this mirror's config (layout, identity): another's ids differ.
  const stateConfig = () => `${configuredLayout(gitConfig) ?? ctx.layout}|${ctx.identity.name}|${ctx.identity.email}`;
  if (
    options.quick === true &&
    configReadable(gitConfig) &&
    (await unchangedSinceSync(
      ctx.dag,
      ctx.cache.states,
      repo,
      sessionId,
      ctx.store.workTree === true ? ctx.store : null,
      stateConfig(),
      options.marker,
    ))
  ) {
    return { sessionId, ok: true, differences: [], unchanged: true };
  }
  const session = await readSession(ctx, sessionId);
  if ((await ctx.store.lstat(joinPath(repo.gitdir, 'HEAD'))) === null) {
    return { sessionId, ok: false, differences: [{ kind: 'missing-repo', detail: `no repository at ${repo.dir}` }] };
  }
  // Under the sync lock: a sync half done by another caller is not a difference.
  return withRepoLock(ctx.store, repo.gitdir, 'sync.lock', () => verifyLocked(ctx, sessionId, session, repo));
}

async function verifyLocked(
  ctx: MirrorContext,
  sessionId: string,
  session: Session,
  repo: Repo,
): Promise<VerifyReport> {
  const differences: Difference[] = [];
  const report = (): VerifyReport => ({
    sessionId,
    ok: differences.every((d) => d.kind === 'extra-branch'),
    differences,
  });
  // Each step below is short for one session, not a long one's whole check: the host gets turns.
  const host = new HostYield(ctx.yieldEveryMs);
  const derivation = await deriveDag(ctx, sessionId, session, host, differences);
  if (derivation === null) return report();
  const layout = await repoLayout(ctx, repo);
  const expectedNames = new Set<string>();
  for (const b of derivation.branches) {
    if (b.complete === 0) continue;
    expectedNames.add(b.name);
    await host.due();
    await verifyBranch(repo, layout, b, differences, host);
  }
  await host.due();
  let actualBranches: string[] = [];
  try {
    actualBranches = await repo.refs.branches();
  } catch (err) {
    differences.push({ kind: 'corrupt', detail: (err as Error).message });
  }
  for (const name of actualBranches) {
    if (!expectedNames.has(name))
      differences.push({
        kind: 'extra-branch',
        branch: name,
        detail: `branch ${name} is not derived from the DAG (kept: refs are never deleted)`,
      });
  }
  if (!configReadable(await ctx.store.readText(joinPath(repo.gitdir, 'config')))) {
    differences.push({ kind: 'corrupt', detail: `${repo.gitdir}/config is missing or unreadable by git` });
  }
  await host.due();
  differences.push(...damageDifferences(await inspectRepository(ctx.store, repo.gitdir)));
  await host.due();
  let head: string | null = null;
  try {
    head = await repo.refs.headBranch();
  } catch (err) {
    differences.push({ kind: 'corrupt', detail: (err as Error).message });
  }
  if (ctx.store.workTree && head !== null && head === derivation.head)
    await verifyWorktree(ctx, repo, derivation, layout, head, differences, host);
  if (derivation.head !== null && head !== derivation.head && expectedNames.has(derivation.head)) {
    differences.push({
      kind: 'head-differs',
      expected: derivation.head,
      actual: head,
      detail: `HEAD names ${head ?? 'nothing'}, the DAG head is on ${derivation.head}`,
    });
  }
  // The ids themselves, once all else agrees: those a fresh backfill of this DAG writes.
  await host.due();
  if (differences.every((d) => d.kind === 'extra-branch'))
    await verifyIds(ctx, sessionId, layout, expectedNames, repo, differences);
  await host.due();
  await verifyFormatAndMeta(ctx.store, repo, session, ctx.identity, differences);
  return report();
}

/** The DAG read whole and derived; null (a `dag-error` added) when it cannot be. */
async function deriveDag(
  ctx: MirrorContext,
  sessionId: string,
  session: Session,
  host: HostYield,
  differences: Difference[],
): Promise<Derivation<Known> | null> {
  const known: Known[] = [];
  try {
    const seen = new Set<string>();
    const none = new Map<string, Known>();
    for await (const node of ctx.dag.nodesAfter(sessionId, 0, { batchSize: ctx.batchSize })) {
      await host.due();
      known.push(ingestNode(ctx, sessionId, node, seen, none).known);
    }
    return await host.run(deriveSteps(known, session.head));
  } catch (err) {
    if (!(err instanceof EntityGitError)) throw err;
    differences.push({ kind: 'dag-error', detail: err.message });
    return null;
  }
}

/** The index and the files of the working tree against the head branch's files. */
async function verifyWorktree(
  ctx: MirrorContext,
  repo: Repo,
  derivation: Derivation<Known>,
  layout: Layout,
  head: string,
  differences: Difference[],
  host: HostYield,
): Promise<void> {
  const expected = new Map<string, string>();
  for (const [path, n] of await host.run(headFileSteps(derivation, layout))) expected.set(path, n.blob);
  await host.due();
  let entries: IndexEntry[] = [];
  try {
    entries = (await readIndex(ctx.store, repo.gitdir))?.entries ?? [];
  } catch {
    entries = [];
  }
  const indexed = entries.filter((e) => e.path !== 'meta.json');
  const same =
    indexed.length === expected.size &&
    indexed.every((e) => expected.get(e.path) === e.oid) &&
    (expected.size === 0 || entries.some((e) => e.path === 'meta.json'));
  if (!same)
    differences.push({
      kind: 'worktree-differs',
      branch: head,
      detail: `the index of ${repo.dir} does not hold the files of ${head}`,
    });
  // The files themselves: `git status` clean is the promise, not only the index.
  await host.due();
  try {
    const tip = await repo.refs.resolve(`refs/heads/${head}`);
    const meta =
      tip === null ? undefined : (await readCommitTree(repo.objects, tip)).find((e) => e.name === 'meta.json');
    const target = new Map(expected);
    if (meta) target.set('meta.json', meta.oid);
    differences.push(...worktreeDifferences(await worktreeDamage(ctx.store, repo.dir, target, host), head, repo.dir));
  } catch {
    // a damaged tip is reported by verifyBranch already
  }
}

/**
 * Compare each branch's tip with the commit a fresh backfill of the DAG writes, built in memory
 * by a mirror of this one's config: a repository can hold the right messages under other ids
 * (written by another config) and would then diverge from every other
 * mirror of the DAG.
 */
async function verifyIds(
  ctx: MirrorContext,
  sessionId: string,
  layout: Layout,
  names: Set<string>,
  repo: Repo,
  differences: Difference[],
): Promise<void> {
  const fresh = createContext(
    {
      dag: ctx.dag,
      storage: memoryStorage(),
      root: '/expected',
      identity: ctx.identity,
      metadataKeys: ctx.keys,
      // ctx.dag already reads through the redactor; the same options keep it as it is.
      redaction: ctx.redaction ?? false,
      layout,
      batchSize: ctx.batchSize,
    },
    ctx.onDemand,
  );
  await syncSession(fresh, sessionId, {});
  const expected = new Map((await branches(fresh, sessionId)).map((b) => [b.name, b.commit]));
  for (const name of [...names].sort()) {
    const want = expected.get(name);
    const actual = await repo.refs.resolve(`refs/heads/${name}`).catch(() => null);
    if (want !== undefined && actual !== want) {
      differences.push({
        kind: 'ids-differ',
        branch: name,
        expected: want,
        actual,
        detail: `branch ${name} holds the DAG's turns under other commit ids than a fresh backfill writes (${want.slice(0, 10)})`,
      });
    }
  }
}

/** Compare one derived branch with the repository by trailers and message blobs. */
async function verifyBranch(
  repo: Repo,
  layout: Layout,
  b: BranchPlan<Known>,
  differences: Difference[],
  host: HostYield,
): Promise<void> {
  let tip: string | null;
  try {
    tip = await repo.refs.resolve(`refs/heads/${b.name}`);
  } catch (err) {
    differences.push({ kind: 'corrupt', branch: b.name, detail: (err as Error).message });
    return;
  }
  if (tip === null) {
    differences.push({
      kind: 'missing-branch',
      branch: b.name,
      detail: `branch ${b.name} (${b.complete} turns) is missing`,
    });
    return;
  }
  let chain: CommitInfo[];
  try {
    chain = (await walk(repo, tip)).reverse();
  } catch (err) {
    differences.push({
      kind: isEntityGitError(err, 'OBJECT_NOT_FOUND') ? 'missing-object' : 'corrupt',
      branch: b.name,
      detail: (err as Error).message,
    });
    return;
  }
  const expectTurns = b.turns.slice(0, b.complete);
  for (let k = 0; k < Math.max(chain.length, expectTurns.length); k++) {
    if (k % 256 === 255) await host.due();
    const c = chain[k];
    const t = expectTurns[k];
    const last = t?.nodes.reduce((x, y) => (y.seq > x.seq ? y : x));
    if (!c || !t || !last || c.turn !== t.index || c.node !== last.id || c.seq !== last.seq) {
      differences.push({
        kind: 'branch-differs',
        branch: b.name,
        expected: last ? `turn ${t!.index} ending at ${last.id}` : null,
        actual: c ? `turn ${c.turn} ending at ${c.node}` : null,
        detail: `branch ${b.name} differs from the DAG at turn ${k + 1} (${chain.length} commits, ${expectTurns.length} turns expected)`,
      });
      return;
    }
  }
  await verifyTipMessages(repo, layout, b, tip, differences, host);
}

/** The messages at the tip of `b` against its nodes' blobs, each blob present. */
async function verifyTipMessages(
  repo: Repo,
  layout: Layout,
  b: BranchPlan<Known>,
  tip: string,
  differences: Difference[],
  host: HostYield,
): Promise<void> {
  const expectTurns = b.turns.slice(0, b.complete);
  const expected = new Map<string, string>();
  for (const t of expectTurns) for (const n of t.nodes) expected.set(messagePath(layout, n), n.blob);
  await host.due();
  try {
    const root = await readCommitTree(repo.objects, tip);
    const messages = root.find((e) => e.name === 'messages');
    const actual = messages ? await messageEntries(repo, messages.oid) : [];
    const same = actual.length === expected.size && actual.every((e) => expected.get(e.name) === e.oid);
    if (!same) {
      differences.push({
        kind: 'branch-differs',
        branch: b.name,
        detail: `the messages at the tip of ${b.name} differ from the DAG's nodes`,
      });
      return;
    }
    for (const e of actual) {
      await host.due();
      if (!(await repo.objects.has(e.oid)))
        differences.push({
          kind: 'missing-object',
          branch: b.name,
          actual: e.oid,
          detail: `blob ${e.oid} (${e.name}) is missing`,
        });
    }
  } catch (err) {
    differences.push({
      kind: isEntityGitError(err, 'OBJECT_NOT_FOUND') ? 'missing-object' : 'corrupt',
      branch: b.name,
      detail: (err as Error).message,
    });
  }
}
