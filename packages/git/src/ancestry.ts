import { isEntityGitError } from './errors.js';
import type { ObjectStore } from './object-store.js';
import { parseCommit } from './objects/commit.js';

/**
 * Whether `ancestor` is `oid` or reachable from it through parents (any parent, not only the
 * first). A commit whose object is missing (a shallow clone's boundary) ends its line of the walk.
 */
export async function isAncestor(objects: ObjectStore, ancestor: string, oid: string): Promise<boolean> {
  const seen = new Set<string>();
  const queue = [oid];
  while (queue.length > 0) {
    const next = queue.pop()!;
    if (next === ancestor) return true;
    if (seen.has(next)) continue;
    seen.add(next);
    let parents: string[];
    try {
      parents = parseCommit(await objects.readTyped(next, 'commit')).parents;
    } catch (err) {
      if (isEntityGitError(err, 'OBJECT_NOT_FOUND')) continue;
      throw err;
    }
    queue.push(...parents);
  }
  return false;
}
