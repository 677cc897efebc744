import { isEntityGitError, isOid, parseCommit, parseTree, joinPath } from '@entity-git/git';
import { commitMessage, turnTime } from '../../model/commit-message.js';
import type { Derivation } from '../../model/derive.js';
import type { MirrorContext } from '../context.js';
import { messagePath } from '../layout.js';
import type { CommitInfo, Layout } from '../mirror.js';
import type { Known } from '../repo/state.js';
import { messageEntries, walk, type Repo } from '../repo/repo.js';

/** What {@link seedFromRepository} looks for, and where it records what it keeps. */
export interface Seed {
  sessionId: string;
  repo: Repo;
  layout: Layout;
  derivation: Derivation<Known>;
  /** Turn key → commit id: the commits kept are added. */
  memo: Map<string, string>;
  /** The memo keys added (for the state's log). */
  added: string[];
  /** meta.json's blob id. */
  metaOid: string;
}

/**
 * Without a cache, find the commits already in the repository that match the DAG, so they are
 * kept rather than recomputed (nothing is written for them again): walk each branch from its
 * ref (or, when the ref is damaged, from the last value its reflog records), match commit k to
 * turn k by trailers, parents, message and time, and accept the matched prefix only if its last
 * commit has this mirror's identity and meta.json and its messages are exactly the DAG's — so a
 * kept commit is the one this mirror would write, and ids stay a pure function of the DAG.
 */
export async function seedFromRepository(ctx: MirrorContext, seed: Seed): Promise<void> {
  const { sessionId, repo, layout, derivation, memo, added, metaOid } = seed;
  for (const b of derivation.branches) {
    let tip: string | null = null;
    try {
      tip = await repo.refs.resolve(`refs/heads/${b.name}`);
    } catch (err) {
      if (!isEntityGitError(err, 'REF_CORRUPT')) throw err;
      const log = (await ctx.store.readText(joinPath(repo.gitdir, 'logs', 'refs', 'heads', b.name))) ?? '';
      const last = log.trimEnd().split('\n').at(-1)?.split(' ')[1];
      tip = isOid(last) ? last : null;
    }
    if (tip === null) continue;
    let chain: CommitInfo[];
    try {
      chain = (await walk(repo, tip)).reverse();
    } catch (err) {
      if (isEntityGitError(err, 'OBJECT_NOT_FOUND') || isEntityGitError(err, 'OBJECT_CORRUPT')) continue;
      throw err;
    }
    let matched = 0;
    for (; matched < Math.min(chain.length, b.complete); matched++) {
      const c = chain[matched]!;
      const t = b.turns[matched]!;
      const last = t.nodes.reduce((x, y) => (y.seq > x.seq ? y : x));
      const parentOk = matched === 0 ? c.parents.length === 0 : c.parents[0] === chain[matched - 1]!.sha;
      if (!parentOk || c.turn !== t.index || c.node !== last.id || c.seq !== last.seq) break;
      // Kept only as this mirror would write it (message and time; identity and meta.json at the tip, below).
      if (c.time !== turnTime(t.nodes) || c.message !== commitMessage(sessionId, t.index, t.nodes)) break;
    }
    if (matched === 0) continue;
    const expected = new Map<string, string>();
    for (const t of b.turns.slice(0, matched)) for (const n of t.nodes) expected.set(messagePath(layout, n), n.blob);
    try {
      const tipCommit = parseCommit(await repo.objects.readTyped(chain[matched - 1]!.sha, 'commit'));
      const who = `${ctx.identity.name} <${ctx.identity.email}> ${tipCommit.time} +0000`;
      if (tipCommit.author !== who || tipCommit.committer !== who) continue;
      const root = parseTree(await repo.objects.readTyped(tipCommit.tree, 'tree'));
      if (root.find((e) => e.name === 'meta.json')?.oid !== metaOid) continue;
      const messages = root.find((e) => e.name === 'messages');
      const actual = messages ? await messageEntries(repo, messages.oid) : [];
      if (actual.length !== expected.size || !actual.every((e) => expected.get(e.name) === e.oid)) continue;
      await repo.objects.forEachTyped(
        actual.map((e) => e.oid),
        'blob',
        () => {},
      );
    } catch (err) {
      if (isEntityGitError(err, 'OBJECT_NOT_FOUND') || isEntityGitError(err, 'OBJECT_CORRUPT')) continue;
      throw err;
    }
    let parent: string | null = null;
    for (let k = 0; k < matched; k++) {
      const key = `${parent ?? ''}|${b.turns[k]!.nodes.map((n) => n.blob).join(',')}`;
      memo.set(key, chain[k]!.sha);
      added.push(key);
      parent = chain[k]!.sha;
    }
  }
}
