import { isEntityGitError, isOid, parseCommit, type ObjectStore, fromUtf8, utf8 } from '@entity-git/git';

/** The ref that records which branch HEAD names (smart HTTP cannot push a symbolic ref). */
export const HEAD_RECORD_REF = 'refs/entity-git/HEAD';

/**
 * HEAD on the remote. Smart HTTP cannot push a symbolic ref, and a bare repository's own HEAD is
 * the host's business, so which branch HEAD names travels as `refs/entity-git/HEAD`: an
 * annotated tag object whose message is `ref: refs/heads/<branch>`. It points at the branch's
 * first commit (turn 1): an object the branch push already sent, so the tag costs the host one
 * small object, and it moves only when HEAD switches branch — not on every turn. Its tagger
 * is that commit's committer, so two machines with the same DAG write the same tag, byte for
 * byte. `git fsck --strict` accepts it; `git fetch` with the default refspec ignores it.
 */
export function buildHeadRecord(branch: string, root: { oid: string; committer: string }): Uint8Array {
  return utf8(
    `object ${root.oid}\ntype commit\ntag entity-git/HEAD\ntagger ${root.committer}\n\nref: refs/heads/${branch}\n`,
  );
}

/** The branch a HEAD record names, or null when the object is not one. */
export function parseHeadRecord(content: Uint8Array): { branch: string; object: string } | null {
  const text = fromUtf8(content);
  const object = /^object ([0-9a-f]{40})\n/.exec(text)?.[1];
  const split = text.indexOf('\n\n');
  const ref = split < 0 ? undefined : /^ref: refs\/heads\/([^\s]+)\n?$/.exec(text.slice(split + 2))?.[1];
  if (!isOid(object) || ref === undefined || !/\ntag entity-git\/HEAD\n/.test(text)) return null;
  return { branch: ref, object };
}

/** Read the HEAD record `oid` from the objects; null when absent or not a record. */
export async function readHeadRecord(objects: ObjectStore, oid: string): Promise<string | null> {
  try {
    const o = await objects.read(oid);
    if (o.type !== 'tag') return null;
    return parseHeadRecord(o.content)?.branch ?? null;
  } catch (err) {
    if (isEntityGitError(err, 'OBJECT_NOT_FOUND') || isEntityGitError(err, 'OBJECT_CORRUPT')) return null;
    throw err;
  }
}

/** The first commit of `tip`'s first-parent chain and its committer line. */
export async function rootCommit(objects: ObjectStore, tip: string): Promise<{ oid: string; committer: string }> {
  const seen = new Set<string>();
  let oid = tip;
  for (;;) {
    seen.add(oid);
    const c = parseCommit(await objects.readTyped(oid, 'commit'));
    const parent = c.parents[0];
    if (parent === undefined || seen.has(parent)) return { oid, committer: c.committer };
    oid = parent;
  }
}
