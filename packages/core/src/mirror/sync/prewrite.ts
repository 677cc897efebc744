import { unframe, type StorageStat, type WorkTreeFile, joinPath } from '@entity-git/git';
import type { Derivation } from '../../model/derive.js';
import type { MirrorContext } from '../context.js';
import { HostYield, yieldToHost } from '../host-yield.js';
import { headFileSteps } from '../layout.js';
import type { Layout } from '../mirror.js';
import type { Known } from '../repo/state.js';
import type { Repo } from '../repo/repo.js';

/** A backfill's message files, already in the working tree: their blob and stat, by path. */
export type Prewritten = Map<string, { oid: string; stat: StorageStat }>;
/** A backfill hands its working-tree files to the storage's writer from this many on… */
const PREWRITE_MIN_FILES = 256;
/** …each of at most this size, up to this many bytes in all (the writer is handed a copy). */
const PREWRITE_FILE_MAX = 1 << 20;
const PREWRITE_BYTES_MAX = 64 << 20;

/**
 * Start writing the message files of a backfill's head branch, to run beside the writing of its
 * objects (the storage's {@link Store.writeFiles}); {@link checkout} then takes their stats for
 * the index instead of writing them. Only into a repository without an index (a checkout would
 * write every file anyway), from {@link PREWRITE_MIN_FILES} files, each of at most
 * {@link PREWRITE_FILE_MAX} bytes, up to {@link PREWRITE_BYTES_MAX} in all.
 */
export async function prewrite(
  ctx: MirrorContext,
  backfill: { repo: Repo; layout: Layout; derivation: Derivation<Known>; fresh: Map<string, Uint8Array> },
): Promise<Prewritten> {
  const { repo, layout, derivation, fresh } = backfill;
  if ((await ctx.store.lstat(joinPath(repo.gitdir, 'index'))) !== null) return new Map();
  const files: WorkTreeFile[] = [];
  const kept: { path: string; oid: string }[] = [];
  let bytes = 0;
  const host = new HostYield(ctx.yieldEveryMs);
  for (const [path, n] of await host.run(headFileSteps(derivation, layout))) {
    if (host.owed()) await yieldToHost();
    const raw = fresh.get(n.blob);
    const data = raw === undefined ? null : unframe(raw);
    if (data === null || data.length > PREWRITE_FILE_MAX || bytes + data.length > PREWRITE_BYTES_MAX) continue;
    bytes += data.length;
    files.push({ path: joinPath(repo.dir, path), data });
    kept.push({ path, oid: n.blob });
  }
  if (files.length < PREWRITE_MIN_FILES) return new Map();
  const stats = await ctx.store.writeFiles(files);
  const out: Prewritten = new Map();
  for (let i = 0; i < kept.length; i++) {
    if (host.owed()) await yieldToHost();
    out.set(kept[i]!.path, { oid: kept[i]!.oid, stat: stats[i]! });
  }
  return out;
}
