import type { Derivation } from '../../model/derive.js';
import { canonicalJson } from '../../model/canonical-json.js';
import type { Session } from '../../model/types.js';
import type { MirrorContext } from '../context.js';
import type { HostYield } from '../host-yield.js';
import type { VerifyReport } from '../mirror.js';
import type { Known } from '../repo/state.js';
import type { Repo } from '../repo/repo.js';
import type { SyncRecord } from '../sync/synced.js';
import { freshTips } from './fresh-ids.js';
import { formatAndMetaDifferences } from './meta.js';
import { RepoCheck } from './repo-check.js';

/**
 * The check after a sync (docs/design.md, 'Verify after a sync'), under the sync lock: the
 * repository against what that sync read and built, with no DAG read and no commit built again
 * (but for a sync that kept commits it did not build: their ids are checked against those a fresh
 * backfill writes, hashed from the sync's derivation). Each branch's ref is the commit the sync
 * built, every commit of it is present, the messages at its tip are the nodes' blobs and present;
 * HEAD, the index and the working tree, the config, the meta ref and the repository's damage as
 * in the full check. The report when all holds; null as soon as anything is not as the sync left
 * it, for the full check to say what (another process may have synced since, or damaged it).
 */
export async function checkSynced(
  ctx: MirrorContext,
  repo: Repo,
  record: SyncRecord,
  host: HostYield,
): Promise<VerifyReport | null> {
  const { derivation, layout } = record;
  const check = new RepoCheck({ ctx, repo, layout, host });
  const names = new Set<string>();
  for (const b of derivation.branches) {
    if (b.complete === 0) continue;
    names.add(b.name);
    const commits = record.commits.get(b.name) ?? [];
    const tip = commits.at(-1);
    if (tip === undefined || commits.length !== b.complete) return null;
    await host.due();
    if ((await repo.refs.resolve(`refs/heads/${b.name}`).catch(() => null)) !== tip) return null;
    for (let k = 0; k < commits.length; k++) {
      if (k % 256 === 255) await host.due();
      if (!(await repo.objects.has(commits[k]!))) return null;
    }
    await check.tipMessages(b, tip);
    if (!check.ok) return null;
  }
  await host.due();
  await check.besideBranches(names);
  const head = await check.headBranch();
  if (ctx.store.workTree && head !== null && head === derivation.head) await check.worktree(derivation, head);
  check.headIs(derivation, head, names);
  if (!check.ok) return null;
  if (!record.built) {
    await host.due();
    await check.ids(await freshTips(ctx, repo.objects, record), names);
  }
  await host.due();
  check.differences.push(...(await formatAndMetaDifferences(ctx, repo, record.session)));
  return check.ok ? { sessionId: record.sessionId, ok: true, differences: check.differences } : null;
}

/**
 * What a DAG read gave, as one string: the row and, branch by branch, every node's id, seq, blob
 * and whether it is pending. Equal for two reads of an unchanged DAG; compared after a sync whose
 * check found differences, to tell "written to since" from "damaged".
 */
export function dagDigest(session: Session, derivation: Derivation<Known>): string {
  const parts = [canonicalJson(session), derivation.head ?? '', derivation.unknownHead ?? ''];
  for (const b of derivation.branches) {
    parts.push(`${b.name}:${b.complete}`);
    for (const t of b.turns) for (const n of t.nodes) parts.push(`${n.id}:${n.seq}:${n.blob}:${n.pending}`);
  }
  return parts.join('\n');
}
