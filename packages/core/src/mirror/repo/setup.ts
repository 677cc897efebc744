import { EntityGitError, parseTree, joinPath } from '@entity-git/git';
import { REPO_FORMAT } from '../../model/session-meta.js';
import type { RepoContext } from './context.js';
import type { Layout } from '../mirror.js';
import { configReadable, configuredLayout, layoutSection, repoConfig } from './config.js';
import { configuredFormat, withFormat } from './format.js';
import { readCommitTree, repoExists, type Repo } from './repo.js';
import { LIVE_STATES, remember } from './state.js';

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
 * layout its trees show and today's format (entity-git has only ever written format 2 to a disk
 * it could reach: docs/design.md, "Repository format").
 */
export async function adoptRepo(ctx: RepoContext, repo: Repo): Promise<void> {
  await init(ctx, repo);
  const path = joinPath(repo.gitdir, 'config');
  const text = await ctx.store.readText(path);
  if (text !== null && configuredFormat(text) === null) await ctx.store.writeAtomic(path, withFormat(text));
}

/**
 * Check the repository's format (see `repo/format.ts`): a config without one (a clone: git does
 * not carry `.git/config`) is given today's; one recording another format is refused with the
 * format in `data` — `REPO_FORMAT_OLD` below today's, `REPO_CORRUPT` above (a newer entity-git).
 */
export async function checkFormat(ctx: RepoContext, repo: Repo): Promise<void> {
  if (ctx.cache.formats.has(repo.gitdir)) return;
  const path = joinPath(repo.gitdir, 'config');
  const text = await ctx.store.readText(path);
  const recorded = configuredFormat(text);
  if (recorded === null) {
    if (text !== null) await ctx.store.writeAtomic(path, withFormat(text));
  } else if (recorded < REPO_FORMAT) {
    throw new EntityGitError(
      'REPO_FORMAT_OLD',
      `${repo.dir} is in format ${recorded}; this entity-git reads and writes format ${REPO_FORMAT} only`,
      { format: recorded },
    );
  } else if (recorded > REPO_FORMAT) {
    throw new EntityGitError(
      'REPO_CORRUPT',
      `${repo.gitdir} is in format ${recorded}, written by a newer entity-git (this one writes ${REPO_FORMAT})`,
      { format: recorded },
    );
  }
  // Read once per repository while this mirror lives: a recorded format never changes.
  remember(ctx.cache.formats, repo.gitdir, true, LIVE_STATES);
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
