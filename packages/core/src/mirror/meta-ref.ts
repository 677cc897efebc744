import {
  isEntityGitError,
  buildCommit,
  buildTree,
  fromUtf8,
  parseCommit,
  parseTree,
  utf8,
  type Identity,
  type ObjectStore,
  type RefStore,
} from '@entity-git/git';
import { canonicalJson, canonicalJsonBytes } from '../model/canonical-json.js';
import { encodeId } from '../model/names.js';
import { immutableMeta, META_REF, sessionRecord } from '../model/session-meta.js';
import { foldLine } from '../model/text.js';
import type { Session } from '../model/types.js';

/** The objects of the meta ref's commit for a session row: a pure function of the row and the identity. */
export interface MetaCommit {
  blob: Uint8Array;
  tree: Uint8Array;
  commit: Uint8Array;
}

/**
 * The meta ref's commit: a tree holding `session.json` (the row as canonical JSON, without
 * `head`), no parent, author and committer the mirror's identity at the session's `created_at`
 * (whole seconds, never before 1970). No parent, so that the commit depends on the row as it is
 * now and not on which earlier versions of it a mirror happened to see: two mirrors of one DAG
 * hold the same meta ref, and a push from the second is a no-op. Earlier values stay in the ref's
 * reflog on the machine that saw them.
 */
export function buildMetaCommit(
  session: Session,
  identity: Identity,
  hash: (type: 'blob' | 'tree', content: Uint8Array) => string,
): MetaCommit {
  const blob = canonicalJsonBytes(sessionRecord(session));
  const tree = buildTree([{ mode: '100644', name: 'session.json', oid: hash('blob', blob) }]);
  const time = Math.max(0, Math.floor(session.created_at));
  const title = session.title === null ? '' : foldLine(session.title, 60);
  const message = `session: ${title === '' ? '(untitled)' : title}\n\nSession: ${encodeId(session.id)}\n`;
  const commit = buildCommit({
    tree: hash('tree', tree),
    parents: [],
    author: { ...identity, time },
    committer: { ...identity, time },
    message,
  });
  return { blob, tree, commit };
}

/** The commit id the meta ref of this row has. */
export function metaCommitId(objects: ObjectStore, session: Session, identity: Identity): string {
  return objects.hash('commit', buildMetaCommit(session, identity, (t, c) => objects.hash(t, c)).commit);
}

/** What the meta ref needs to show the row: its commit's objects and where the ref is now. */
export interface MetaRefPlan {
  meta: MetaCommit;
  /** The commit id the ref is to hold. */
  oid: string;
  /** What it holds now (null: absent; undefined: damaged, rewritten without a check). */
  current: string | null | undefined;
}

/**
 * What {@link META_REF} needs for the row: null when it already points at the row's commit. A
 * damaged ref is rewritten; with `checkObjects`, a missing commit, tree or blob too.
 */
export async function planMetaRef(
  objects: ObjectStore,
  refs: RefStore,
  session: Session,
  identity: Identity,
  checkObjects = false,
): Promise<MetaRefPlan | null> {
  const meta = buildMetaCommit(session, identity, (t, c) => objects.hash(t, c));
  const oid = objects.hash('commit', meta.commit);
  let current: string | null | undefined;
  try {
    const raw = await refs.readRaw(META_REF);
    current = raw !== null && 'oid' in raw ? raw.oid : null;
  } catch (err) {
    if (!isEntityGitError(err, 'REF_CORRUPT')) throw err;
    current = undefined;
  }
  // A turn trusts the ref; a repair (`checkObjects`) also checks its commit, tree and blob are
  // there (a damaged pack can lose any one of them).
  const present = async () =>
    (await objects.has(oid)) &&
    (await objects.has(objects.hash('tree', meta.tree))) &&
    (await objects.has(objects.hash('blob', meta.blob)));
  if (current === oid && (!checkObjects || (await present()))) return null;
  return { meta, oid, current };
}

/**
 * Move {@link META_REF} as `plan` says, writing its three objects first as loose objects unless
 * the caller already put them into a pack that is in place (`written`). Its first value writes no
 * reflog, as git writes none for a ref outside `refs/heads`, `refs/remotes` and `refs/notes`
 * (`core.logAllRefUpdates`): the entry would record no earlier row, and cost every session a
 * directory and a file (`logs/refs/entity-git/meta`). A change of the row appends an entry,
 * creating the reflog then, so each earlier value stays in it on the machine that saw it.
 */
export async function moveMetaRef(
  objects: ObjectStore,
  refs: RefStore,
  plan: MetaRefPlan,
  identity: Identity,
  written = false,
): Promise<void> {
  const { meta, oid, current } = plan;
  if (!written) {
    await objects.write('blob', meta.blob);
    await objects.write('tree', meta.tree);
    await objects.write('commit', meta.commit);
  }
  if (current !== oid)
    await refs.update(META_REF, oid, {
      old: current,
      reflog: current === null ? null : { who: identity, message: 'entity-git: session row changed' },
    });
}

/**
 * The blob id every commit's `meta.json` has for the session row {@link META_REF} shows (its
 * immutable fields as canonical JSON); null when the ref, its objects or its `session.json`
 * are absent or not a session row (a repository pushed before the meta ref existed).
 */
export async function metaOidOfRef(objects: ObjectStore, refs: RefStore): Promise<string | null> {
  try {
    const tip = await refs.resolve(META_REF);
    if (tip === null) return null;
    const tree = parseTree(await objects.readTyped(parseCommit(await objects.readTyped(tip, 'commit')).tree, 'tree'));
    const entry = tree.find((e) => e.name === 'session.json');
    if (entry === undefined) return null;
    const row = JSON.parse(fromUtf8(await objects.readTyped(entry.oid, 'blob'))) as Partial<Session>;
    if (typeof row.id !== 'string' || typeof row.created_at !== 'number') return null;
    return objects.hash('blob', utf8(canonicalJson(immutableMeta({ id: row.id, created_at: row.created_at }))));
  } catch (err) {
    if (
      err instanceof SyntaxError ||
      isEntityGitError(err, 'OBJECT_NOT_FOUND') ||
      isEntityGitError(err, 'OBJECT_CORRUPT')
    )
      return null;
    if (isEntityGitError(err, 'REF_CORRUPT')) return null;
    throw err;
  }
}

export { META_REF };
