// Bounded growth of an object-engine shadow repository, by the native engine's rule
// (node/shadow-prune.ts): keep the newest N turns' snapshots, cut the history below the oldest
// kept turn with git's own shallow boundary (no commit is rewritten, so every id and trailer stays
// valid), and delete the loose objects nothing reaches any more. There is no repack: the object
// engine writes loose objects only. docs/design.md §7, "The object engine's shadow mode".
import { EntityGitError, joinPath, parseTree } from '@entity-git/git';
import { DEFAULT_KEEP_TURNS } from '../shadow-names.js';
import type { ObjectShadowRepository } from './object-shadow-repository.js';
import type { PruneResult } from '../shadow-project-base.js';

/** The commits reachable from `tips`, descendants before ancestors (as `git rev-list --topo-order`), stopping at `boundary`. */
async function topoOrder(
  repo: ObjectShadowRepository,
  tips: readonly string[],
  boundary: ReadonlySet<string>,
): Promise<string[]> {
  const done = new Set<string>();
  const post: string[] = [];
  for (const tip of tips) {
    const stack: Array<{ id: string; parents: string[] | null }> = [{ id: tip, parents: null }];
    while (stack.length > 0) {
      const top = stack.at(-1)!;
      if (top.parents === null) {
        if (done.has(top.id)) {
          stack.pop();
          continue;
        }
        done.add(top.id);
        const parents = boundary.has(top.id) ? [] : ((await repo.commit(top.id).catch(() => null))?.parents ?? []);
        top.parents = [...parents];
      }
      const next = top.parents.pop();
      if (next === undefined) post.push(stack.pop()!.id);
      else if (!done.has(next)) stack.push({ id: next, parents: null });
    }
  }
  return post.reverse();
}

/** Every object the commits reach: themselves, their trees and blobs. */
async function reachable(repo: ObjectShadowRepository, commits: readonly string[]): Promise<Set<string>> {
  const seen = new Set<string>(commits);
  const walk = async (tree: string): Promise<void> => {
    if (seen.has(tree)) return;
    seen.add(tree);
    for (const e of parseTree(await repo.objects.readTyped(tree, 'tree'))) {
      if (e.mode === '40000') await walk(e.oid);
      else seen.add(e.oid);
    }
  };
  for (const c of commits) await walk((await repo.commit(c)).tree);
  return seen;
}

/** Keeps the newest `keep` turns' snapshots (by the snapshots' own order) and deletes what nothing reaches. */
export function pruneSnapshots(repo: ObjectShadowRepository, keep: number = DEFAULT_KEEP_TURNS): Promise<PruneResult> {
  if (!Number.isSafeInteger(keep) || keep < 1)
    throw new EntityGitError('INVALID_OPTION', `keep must be a whole number ≥ 1, got ${keep}`, { keep });
  return repo.exclusive(async () => {
    const turnOf = new Map<string, string>();
    for (const [ref, oid] of await repo.refsUnder('refs/turns/'))
      if (ref.endsWith('/after')) turnOf.set(oid, ref.slice(0, -'/after'.length));
    const shallow = joinPath(repo.gitDir, 'shallow');
    const cut = new Set(((await repo.store.readText(shallow)) ?? '').split('\n').filter(Boolean));
    const afters = (await topoOrder(repo, [...turnOf.keys()], cut)).flatMap((c) => turnOf.get(c) ?? []);
    if (afters.length <= keep) return { kept: afters.length, dropped: 0 };
    const kept = afters.slice(0, keep);
    const dropped = afters.slice(keep);
    for (const t of dropped) for (const which of ['after', 'before']) await repo.deleteRef(`${t}/${which}`);
    const befores: string[] = [];
    for (const t of kept) befores.push((await repo.resolve(`${t}/before`))!);
    // The oldest kept turn's before-snapshot becomes the boundary: nothing below it is reached.
    const order = await topoOrder(repo, befores, cut);
    const wanted = new Set(befores);
    const boundary = order.filter((c) => wanted.has(c)).at(-1)!;
    await repo.store.writeAtomic(shallow, `${boundary}\n`);
    const tips = [...(await repo.refsUnder('refs/')).values()];
    const live = await reachable(repo, await topoOrder(repo, tips, new Set([boundary])));
    await deleteLooseExcept(repo, live);
    return { kept: kept.length, dropped: dropped.length };
  });
}

async function deleteLooseExcept(repo: ObjectShadowRepository, live: ReadonlySet<string>): Promise<void> {
  const objects = joinPath(repo.gitDir, 'objects');
  for (const fan of await repo.store.readdir(objects)) {
    if (!/^[0-9a-f]{2}$/.test(fan)) continue;
    for (const rest of await repo.store.readdir(joinPath(objects, fan)))
      if (/^[0-9a-f]{38}$/.test(rest) && !live.has(fan + rest)) await repo.store.remove(joinPath(objects, fan, rest));
  }
}
