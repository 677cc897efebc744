// Repositories of format 1 (before the format was recorded): how one is recognised from its
// trees, and its tips kept before a rebuild. Loaded on first use (on-demand.ts): a repository
// that records its format never needs it.
import {
  isEntityGitError,
  parseCommit,
  parseTree,
  type Identity,
  type ObjectStore,
  type RefStore,
} from '@entity-git/git';
import { FORMAT_1_BACKUP } from './repo/format.js';

/**
 * The format of a repository whose config does not record one (written before formats were
 * recorded, or cloned: a clone does not carry `.git/config`): 2 when it has no branch or when the
 * tip of every branch holds exactly today's `meta.json` (the immutable fields), else 1. A
 * rebuild that a crash cut short leaves some tips in each format: that reads as 1, so it is
 * never taken for a whole format-2 history.
 */
export async function formatFromTrees(
  objects: ObjectStore,
  refs: RefStore,
  metaOid: string,
): Promise<{ format: 1 | 2; tips: Map<string, string> }> {
  const tips = new Map<string, string>();
  let format: 1 | 2 = 2;
  for (const name of await refs.branches()) {
    let tip: string | null;
    try {
      tip = await refs.resolve(`refs/heads/${name}`);
    } catch (err) {
      if (isEntityGitError(err, 'REF_CORRUPT')) continue;
      throw err;
    }
    if (tip === null) continue;
    tips.set(name, tip);
    try {
      const root = parseTree(await objects.readTyped(parseCommit(await objects.readTyped(tip, 'commit')).tree, 'tree'));
      if (root.find((e) => e.name === 'meta.json')?.oid !== metaOid) format = 1;
    } catch (err) {
      // a damaged tip says nothing about the format; repair rewrites it
      if (!isEntityGitError(err, 'OBJECT_NOT_FOUND') && !isEntityGitError(err, 'OBJECT_CORRUPT')) throw err;
    }
  }
  return { format, tips };
}

/**
 * Before a rebuild moves any ref: keep every branch tip of the old format reachable under
 * {@link FORMAT_1_BACKUP}. A backup already there (a rebuild a crash cut short) is kept: it
 * holds the tip from before the first attempt.
 */
export async function backUpFormat1(refs: RefStore, tips: Map<string, string>, who: Identity): Promise<void> {
  for (const [name, tip] of tips) {
    const ref = `${FORMAT_1_BACKUP}${name}`;
    if ((await refs.readRaw(ref).catch(() => null)) !== null) continue;
    await refs.update(ref, tip, {
      old: null,
      reflog: { who, message: 'entity-git: format 1 tip kept before the rebuild' },
    });
  }
}
