// The checkout of a session repository's working tree and index: a sync's (`checkout`, with what
// the sync knows of the new turns) and a fetch's (`checkOutTree`, from HEAD's tree), one code.
// Loaded on first use through on-demand.ts (sync/checkout.ts calls it): a storage without a
// working tree never loads it.
import {
  isEntityGitError,
  toHex,
  buildIndex,
  buildIndexSteps,
  buildSplitIndex,
  entryFromStat,
  readIndex,
  type IndexEntry,
  type SharedIndex,
  unframe,
  acquireLockFile,
  joinPath,
  parseCommit,
  parseTree,
  type StorageStat,
} from '@entity-git/git';
import type { Derivation } from '../model/derive.js';
import type { MirrorContext } from './context.js';
import type { RepoContext } from './repo/context.js';
import { HostYield, yieldToHost } from './host-yield.js';
import { headFileSteps, messagePath } from './layout.js';
import type { Layout } from './mirror.js';
import { fileId, sameFile } from './repo/cache.js';
import { LIVE_STATES, remember, type Known } from './repo/state.js';
import { readCommitTree, type Repo } from './repo/repo.js';
import type { Prewritten } from './sync/prewrite.js';

import { SPLIT_MIN } from './split-index.js';
import { mirrorFiles, worktreeDamage, worktreeDamaged } from './worktree-check.js';

/** What {@link checkout} makes the working tree and index hold, and what it may take as known. */
export interface CheckoutTarget {
  layout: Layout;
  /** HEAD's tip; null before the first complete turn. */
  tip: string | null;
  derivation: Derivation<Known>;
  /** Framed blobs this sync read from the DAG, by blob id (written without reading them back). */
  fresh: Map<string, Uint8Array>;
  /** The nodes HEAD's branch alone gained since the index this mirror last wrote. Default null: none known. */
  appended?: Known[] | null;
  /** meta.json's blob id at `tip`, when known (a commit this sync made). Default null. */
  metaOid?: string | null;
  /** meta.json's content when `metaOid` is known (written without reading the blob back). */
  metaBytes?: Uint8Array;
  /** A backfill's message files already in the working tree. Default null. */
  prewritten?: Prewritten | null;
  /** A repair: compare the files themselves, not only the index. Default false. */
  checkFiles?: boolean;
}

/**
 * Make the working tree and index equal HEAD's tree; true when anything changed. `appended`:
 * HEAD's branch only gained these nodes' files since the index this mirror last wrote (and the
 * meta.json of its new tip), so only they are written — when that index is still the file.
 */
export async function checkout(ctx: MirrorContext, repo: Repo, o: CheckoutTarget): Promise<boolean> {
  const { layout, tip, derivation, fresh } = o;
  const { appended = null, metaOid = null, metaBytes, prewritten = null, checkFiles = false } = o;
  if (
    appended !== null &&
    tip !== null &&
    (await appendToIndex(ctx, repo, { layout, tip, appended, fresh, knownMeta: metaOid }))
  )
    return appended.length > 0;
  // A backfill's checkout goes over every file of the session: the host gets its turns.
  const host = new HostYield(ctx.yieldEveryMs);
  const target = new Map<string, string>();
  if (tip !== null) {
    // A tip this sync made: its meta.json is known, and its pack (a backfill's, just written)
    // need not be opened for it — opening sorts the offsets of every object in it.
    const meta =
      metaOid !== null ? metaOid : (await readCommitTree(repo.objects, tip)).find((e) => e.name === 'meta.json')?.oid;
    if (meta !== undefined) target.set('meta.json', meta);
    for (const [path, n] of await host.run(headFileSteps(derivation, layout))) {
      if (target.size % 256 === 255) await host.due();
      target.set(path, n.blob);
    }
  }
  const known = metaOid !== null && metaBytes !== undefined ? { oid: metaOid, bytes: metaBytes } : null;
  return writeWorktree(ctx, repo, { target, fresh, meta: known, prewritten, checkFiles, host });
}

/**
 * The one checkout of a session repository outside a sync (a fetch, a restore): the working
 * tree and index made equal to HEAD's tree, read from the objects, exactly as a sync's checkout
 * leaves them (the same index entries and, from {@link SPLIT_MIN} entries on, the same split
 * index): the next sync finds nothing to change. Runs under the sync lock, on a storage with a
 * working tree; true when anything changed.
 */
export async function checkOutTree(ctx: RepoContext, repo: Repo): Promise<boolean> {
  const host = new HostYield(ctx.yieldEveryMs);
  const target = new Map<string, string>();
  const tip = await repo.refs.resolve('HEAD');
  if (tip !== null) {
    const walk = async (tree: string, prefix: string): Promise<void> => {
      for (const e of parseTree(await repo.objects.readTyped(tree, 'tree'))) {
        await host.due();
        if (e.mode === '40000') await walk(e.oid, `${prefix}${e.name}/`);
        else if (e.mode === '100644' || e.mode === '100755') target.set(prefix + e.name, e.oid);
      }
    };
    await walk(parseCommit(await repo.objects.readTyped(tip, 'commit')).tree, '');
  }
  return writeWorktree(ctx, repo, { target, fresh: new Map(), meta: null, prewritten: null, checkFiles: false, host });
}

/** The files a checkout writes, by path, and what it may take as known (see {@link CheckoutTarget}). */
interface WorktreeTarget {
  /** Every file HEAD's tree holds: its blob id, by path. */
  target: Map<string, string>;
  fresh: Map<string, Uint8Array>;
  /** meta.json's blob id and content, when this sync made them. */
  meta: { oid: string; bytes: Uint8Array } | null;
  prewritten: Prewritten | null;
  checkFiles: boolean;
  host: HostYield;
}

/** The index a checkout starts from: the one this mirror last wrote while it is still the file, else the file read. */
interface CurrentIndex {
  entries: IndexEntry[];
  shared: SharedIndex | null;
  /** The index file's stat; null when there is none. */
  st: StorageStat | null;
  /** The file could not be read: every file is written again. */
  unreadable: boolean;
}

async function currentIndex(ctx: RepoContext, repo: Repo): Promise<CurrentIndex> {
  const indexPath = joinPath(repo.gitdir, 'index');
  // The index as this mirror last wrote it, while the file is still that one (anyone else's
  // write — git refreshing stat data, a user's checkout — changes its identity).
  const cached = ctx.cache.indexes.get(repo.gitdir);
  const st = await ctx.store.lstat(indexPath);
  const data = cached && st && sameFile(cached.id, st) ? null : await ctx.store.read(indexPath);
  ctx.cache.indexes.delete(repo.gitdir);
  if (cached && st && data === null) return { entries: cached.entries, shared: cached.shared, st, unreadable: false };
  if (data === null) return { entries: [], shared: null, st, unreadable: false };
  try {
    const read = (await readIndex(ctx.store, repo.gitdir, data))!;
    return { entries: read.entries, shared: read.shared, st, unreadable: false };
  } catch (err) {
    if (!isEntityGitError(err, 'REPO_CORRUPT')) throw err;
    return { entries: [], shared: null, st, unreadable: true };
  }
}

/** Make the working tree and index hold `w.target`; true when anything changed. */
async function writeWorktree(ctx: RepoContext, repo: Repo, w: WorktreeTarget): Promise<boolean> {
  const { target, host } = w;
  const { entries: current, shared, st, unreadable } = await currentIndex(ctx, repo);
  let rewriteAll = unreadable;
  // A repair compares the files themselves (the index trusts them): any damage, every file written again.
  if (w.checkFiles) {
    if (worktreeDamaged(await worktreeDamage(ctx.store, repo.dir, target, host))) rewriteAll = true;
  }
  const present = st !== null;
  await host.due();
  const { next, changed: wrote } = await writeFiles(ctx, repo, w, { current, rewriteAll });
  let changed = wrote || rewriteAll || (!present && target.size > 0);
  for (const e of current) {
    if (host.owed()) await yieldToHost();
    if (!target.has(e.path)) {
      await ctx.store.remove(joinPath(repo.dir, e.path));
      changed = true;
    }
  }
  // Without an index to say what the previous HEAD put there (lost, unreadable, or distrusted),
  // the mirror's files HEAD's tree does not have are found in the working tree itself.
  if (!present || rewriteAll) {
    for (const path of await mirrorFiles(ctx.store, repo.dir, target, host)) {
      if (!target.has(path)) {
        await ctx.store.remove(joinPath(repo.dir, path));
        changed = true;
      }
    }
  }
  if (!changed) {
    if (st) {
      const added = shared === null ? current : current.filter((e) => !shared.members.has(e));
      remember(ctx.cache.indexes, repo.gitdir, { id: fileId(st), entries: current, shared, added }, LIVE_STATES);
    }
    return false;
  }
  // Kept in path order, so the next turn's entries only need appending.
  await host.due();
  next.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  await host.due();
  await writeIndex(ctx, repo, { entries: next, shared });
  return true;
}

/** Write each target file the `current` index does not already show (all with `rewriteAll`); the next index's entries. */
async function writeFiles(
  ctx: RepoContext,
  repo: Repo,
  w: WorktreeTarget,
  { current, rewriteAll }: { current: IndexEntry[]; rewriteAll: boolean },
): Promise<{ next: IndexEntry[]; changed: boolean }> {
  const byPath = new Map(current.map((e) => [e.path, e]));
  let changed = false;
  const next: IndexEntry[] = [];
  for (const [path, oid] of w.target) {
    if (w.host.owed()) await yieldToHost();
    const cur = byPath.get(path);
    if (!rewriteAll && cur !== undefined && cur.oid === oid && cur.mode === 0o100644) {
      next.push(cur);
      continue;
    }
    changed = true;
    const pre = w.prewritten?.get(path);
    if (pre !== undefined && pre.oid === oid) {
      next.push(entryFromStat(path, oid, pre.stat));
      continue;
    }
    const file = joinPath(repo.dir, path);
    const raw = w.fresh.get(oid);
    const bytes = raw ? unframe(raw) : oid === w.meta?.oid ? w.meta.bytes : await repo.objects.readTyped(oid, 'blob');
    await ctx.store.writeCreatingParent(file, bytes);
    next.push(entryFromStat(path, oid, await ctx.store.fs.lstat(file)));
  }
  return { next, changed };
}

/** What {@link appendToIndex} adds: the messages `appended` after the cached index, at commit `tip`. */
interface Appended {
  layout: Layout;
  tip: string;
  appended: Known[];
  /** Blobs written by this sync, by id (framed). */
  fresh: Map<string, Uint8Array>;
  /** `meta.json`'s blob id at `tip` when known (null: read from the tip's tree). */
  knownMeta: string | null;
}

/** The `appended` case of {@link checkout}; false when it does not apply. */
async function appendToIndex(
  ctx: MirrorContext,
  repo: Repo,
  { layout, tip, appended, fresh, knownMeta }: Appended,
): Promise<boolean> {
  const indexPath = joinPath(repo.gitdir, 'index');
  const cached = ctx.cache.indexes.get(repo.gitdir);
  const st = await ctx.store.lstat(indexPath);
  if (!cached || !st || !sameFile(cached.id, st)) return false;
  if (appended.length === 0) return true;
  const current = cached.entries;
  const at =
    current.length > 0 && current.at(-1)!.path === 'meta.json'
      ? current.length - 1
      : current.findIndex((e) => e.path === 'meta.json');
  if (at < 0) return false;
  const meta = current[at]!;
  const metaOid = knownMeta ?? (await readCommitTree(repo.objects, tip)).find((e) => e.name === 'meta.json')?.oid;
  if (metaOid === undefined) return false;
  ctx.cache.indexes.delete(repo.gitdir);
  const next = at === current.length - 1 ? current.slice(0, -1) : current.filter((_, i) => i !== at);
  // The entries the shared index lacks: those it lacked, and the new ones.
  const added = cached.added.filter((e) => e !== meta);
  const before = next.length;
  for (const n of appended) {
    const path = `messages/${messagePath(layout, n)}`;
    const file = joinPath(repo.dir, path);
    const raw = fresh.get(n.blob);
    await ctx.store.writeCreatingParent(file, raw ? unframe(raw) : await repo.objects.readTyped(n.blob, 'blob'));
    next.push(entryFromStat(path, n.blob, await ctx.store.fs.lstat(file)));
  }
  let metaEntry = meta;
  if (meta.oid !== metaOid) {
    const file = joinPath(repo.dir, 'meta.json');
    await ctx.store.writeCreatingParent(file, await repo.objects.readTyped(metaOid, 'blob'));
    metaEntry = entryFromStat('meta.json', metaOid, await ctx.store.fs.lstat(file));
  }
  added.push(...next.slice(before));
  if (metaEntry !== meta || cached.added.includes(meta)) added.push(metaEntry);
  next.push(metaEntry);
  // Message names begin with their seq: the new files mostly sort after every file there, and
  // before meta.json. Only what was appended is checked.
  for (let i = Math.max(1, before); i < next.length; i++) {
    if (next[i - 1]!.path < next[i]!.path) continue;
    next.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    break;
  }
  await writeIndex(ctx, repo, { entries: next, shared: cached.shared, knownAdded: added });
  return true;
}

/**
 * Replace the index under `index.lock`, and remember what it holds. From {@link SPLIT_MIN}
 * entries on, the index is split (git's split index): the entries of `shared`, the shared
 * index the current one names, stay in that file, and the index holds only the entries added
 * since — so a turn writes a few entries, not the whole session. A new shared index, holding
 * every entry, is written once those added entries pass an eighth of it (or one of its entries
 * changed). Shared indexes other than the new one and the one it replaces are removed.
 */
async function writeIndex(
  ctx: RepoContext,
  repo: Repo,
  {
    entries,
    shared,
    knownAdded,
  }: {
    entries: IndexEntry[];
    /** The shared index the current index names, if any. */
    shared: SharedIndex | null;
    /** The entries `shared` lacks, from a caller that knows them. */
    knownAdded?: IndexEntry[];
  },
): Promise<void> {
  const indexPath = joinPath(repo.gitdir, 'index');
  const lock = `${indexPath}.lock`;
  const codec = ctx.store.codec;
  let bytes: Uint8Array;
  let now: SharedIndex | null = null;
  let written: string | null = null;
  let outside = entries;
  if (entries.length < SPLIT_MIN) bytes = buildIndex(entries, codec);
  else {
    // `knownAdded`, from a caller that knows which entries are new, spares a pass over them all.
    const added = shared && (knownAdded ?? entries.filter((e) => !shared.members.has(e)));
    if (
      shared &&
      added &&
      added.length + shared.members.size === entries.length &&
      added.length <= shared.members.size / 8
    ) {
      now = shared;
      outside = added;
    } else {
      const whole = await new HostYield(ctx.yieldEveryMs).run(buildIndexSteps(entries, codec));
      written = toHex(whole.subarray(whole.length - 20));
      await ctx.store.writeAtomic(joinPath(repo.gitdir, `sharedindex.${written}`), whole);
      now = { oid: written, members: new Set(entries) };
      outside = [];
    }
    bytes = buildSplitIndex(outside, now.oid, codec);
  }
  await acquireLockFile(ctx.store, lock, bytes, ctx.lock);
  try {
    await ctx.store.fs.rename(lock, indexPath);
  } catch (err) {
    await ctx.store.remove(lock);
    throw ctx.store.wrap(err, 'write index', indexPath);
  }
  const st = await ctx.store.lstat(indexPath);
  if (st)
    remember(ctx.cache.indexes, repo.gitdir, { id: fileId(st), entries, shared: now, added: outside }, LIVE_STATES);
  if (written !== null || (now === null && shared !== null)) {
    const keep = new Set([`sharedindex.${now?.oid}`, `sharedindex.${shared?.oid}`]);
    for (const name of await ctx.store.readdir(repo.gitdir)) {
      if (name.startsWith('sharedindex.') && !keep.has(name)) await ctx.store.remove(joinPath(repo.gitdir, name));
    }
  }
}
