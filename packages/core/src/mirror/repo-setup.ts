import { EntityGitError, parseTree, joinPath } from '@entity-git/git';
import { REPO_FORMAT } from '../model/session-meta.js';
import type { MirrorContext } from './context.js';
import type { RepoContext } from './repo-context.js';
import type { Layout } from './mirror.js';
import { configReadable, configuredLayout, layoutSection, repoConfig } from './repo-config.js';
import { configuredFormat, withFormat } from './repo-format.js';
import { readCommitTree, repoExists, type Repo } from './repo.js';
import { LIVE_STATES, remember } from './repo-state.js';

/**
 * Make `repo` a repository if it is not one, with this mirror's layout; one made elsewhere (a
 * fetch, or before layouts were recorded) is given the layout its trees show. `full`: also put
 * back a config git could not read (repair).
 */
export async function init(ctx: RepoContext, repo: Repo, full = false): Promise<void> {
  if (!(await repoExists(ctx, repo))) return createRepo(ctx, repo, repoConfig(ctx.layout));
  const config = joinPath(repo.gitdir, 'config');
  const text = await ctx.store.readText(config);
  if (configReadable(text)) {
    if (configuredLayout(text) === null)
      await ctx.store.writeAtomic(
        config,
        `${text!.replace(/\n?$/, '\n')}${layoutSection((await treeLayout(repo)) ?? ctx.layout)}`,
      );
  } else if (full) {
    await ctx.store.writeAtomic(config, repoConfig((await treeLayout(repo)) ?? ctx.layout));
  }
}

/**
 * Create the repository `repo` with `config` (the one way a session repository is made): what
 * git needs to call the directory a repository (HEAD, objects/, refs/) and objects/pack, where
 * readers list packs. Every other directory (objects/xx, objects/info, refs/heads, logs) is made
 * on first use, as git does, and there is no `description`: a directory is a 4 KB block, so the
 * 256 fan-out directories made up front would be most of a short session's size on disk. A fetch passes
 * git's core section alone (`CORE_CONFIG`): the layout and format are known once the
 * objects are there ({@link adoptRepo}).
 */
export async function createRepo(ctx: RepoContext, repo: Repo, config: string): Promise<void> {
  for (const d of ['objects/pack', 'refs']) await ctx.store.mkdirp(joinPath(repo.gitdir, d));
  await ctx.store.writeAtomic(joinPath(repo.gitdir, 'config'), config);
  // HEAD last: its presence is what makes the directory a repository.
  await ctx.store.writeAtomic(joinPath(repo.gitdir, 'HEAD'), 'ref: refs/heads/main\n');
}

/**
 * A repository filled from elsewhere (a fetch) gets what a sync records in one it makes: the
 * layout its trees show and, when the tip of every branch holds `metaOid` (the `meta.json` of
 * the session row the meta ref shows), today's format. Without a `metaOid`, or with a tip that
 * holds another `meta.json`, the format stays unrecorded and the next sync decides it from the
 * DAG, as for any repository without one.
 */
export async function adoptRepo(ctx: RepoContext, repo: Repo, metaOid: string | null): Promise<void> {
  await init(ctx, repo);
  const path = joinPath(repo.gitdir, 'config');
  const text = await ctx.store.readText(path);
  if (metaOid === null || text === null || configuredFormat(text) !== null) return;
  const { formatFromTrees } = await ctx.onDemand();
  if ((await formatFromTrees(repo.objects, repo.refs, metaOid)).format === 2)
    await ctx.store.writeAtomic(path, withFormat(text));
}

/**
 * The repository's format (see `repo-format.ts`). A config without one is given it when the
 * trees show format 2. A format-1 history is refused (`REPO_FORMAT_OLD`) unless `full`: then
 * its tips are backed up and true is returned — the caller rebuilds every branch and records
 * the format last.
 */
export async function checkFormat(ctx: MirrorContext, repo: Repo, metaOid: string, full: boolean): Promise<boolean> {
  if (!full && ctx.cache.formats.has(repo.gitdir)) return false;
  const path = joinPath(repo.gitdir, 'config');
  const text = await ctx.store.readText(path);
  const recorded = configuredFormat(text);
  if (recorded === REPO_FORMAT) {
    // Read once per repository while this mirror lives: a recorded format never changes.
    remember(ctx.cache.formats, repo.gitdir, true, LIVE_STATES);
    return false;
  }
  if (recorded !== null && recorded > REPO_FORMAT) {
    throw new EntityGitError(
      'REPO_CORRUPT',
      `${repo.gitdir} is in format ${recorded}, written by a newer entity-git (this one writes ${REPO_FORMAT})`,
      { format: recorded },
    );
  }
  const { formatFromTrees, backUpFormat1 } = await ctx.onDemand();
  const { format, tips } = await formatFromTrees(repo.objects, repo.refs, metaOid);
  if (format === 2) {
    if (text !== null) await ctx.store.writeAtomic(path, withFormat(text));
    return false;
  }
  if (!full) {
    throw new EntityGitError(
      'REPO_FORMAT_OLD',
      `${repo.dir} was written in format 1 (meta.json held the mutable session row, so its commit ids depend on when the row changed); reconcile (\`entity-git sync\`) or a full sync rebuilds it: the old tips are kept under refs/entity-git/format-1/`,
      { format: 1 },
    );
  }
  await backUpFormat1(repo.refs, tips, ctx.identity);
  return true;
}

/**
 * The layout of an existing repository: what its config records, else what its trees show
 * (a config damaged or not carried over by a clone), else this mirror's option.
 */
export async function repoLayout(ctx: RepoContext, repo: Repo): Promise<Layout> {
  // A repository's recorded layout never changes: once read, it is known.
  const known = ctx.cache.layouts.get(repo.gitdir);
  if (known !== undefined) return known;
  const recorded = configuredLayout(await ctx.store.readText(joinPath(repo.gitdir, 'config')));
  if (recorded !== null) remember(ctx.cache.layouts, repo.gitdir, recorded, LIVE_STATES);
  return recorded ?? (await treeLayout(repo)) ?? ctx.layout;
}

/** The layout the trees of a repository's branches show; null when no commit says. */
async function treeLayout(repo: Repo): Promise<Layout | null> {
  let names: string[];
  try {
    names = await repo.refs.branches();
  } catch {
    return null;
  }
  for (const name of names) {
    try {
      const tip = await repo.refs.resolve(`refs/heads/${name}`);
      if (tip === null) continue;
      const root = await readCommitTree(repo.objects, tip);
      const messages = root.find((e) => e.name === 'messages');
      if (!messages) continue;
      const first = parseTree(await repo.objects.readTyped(messages.oid, 'tree'))[0];
      if (first) return first.mode === '40000' ? 'sharded' : 'flat';
    } catch {
      // a damaged branch says nothing; another may
    }
  }
  return null;
}
