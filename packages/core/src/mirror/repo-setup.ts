import { EntityGitError, parseTree, joinPath } from '@entity-git/git';
import { REPO_FORMAT } from '../model/session-meta.js';
import type { MirrorContext } from './context.js';
import type { Layout } from './mirror.js';
import { configReadable, configuredLayout, layoutSection, repoConfig } from './repo-config.js';
import { configuredFormat, withFormat } from './repo-format.js';
import { readCommitTree, type Repo } from './repo.js';
import { LIVE_STATES, remember } from './repo-state.js';

/** Make `repo` a repository if it is not one. `full`: also put back a config git could not read (repair). */
export async function init(ctx: MirrorContext, repo: Repo, full = false): Promise<void> {
  if ((await ctx.store.lstat(joinPath(repo.gitdir, 'HEAD'))) !== null) {
    const config = joinPath(repo.gitdir, 'config');
    const text = await ctx.store.readText(config);
    if (configReadable(text)) {
      // A repository made elsewhere (restored from a remote, or before layouts were recorded).
      if (configuredLayout(text) === null)
        await ctx.store.writeAtomic(
          config,
          `${text!.replace(/\n?$/, '\n')}${layoutSection((await treeLayout(repo)) ?? ctx.layout)}`,
        );
    } else if (full) {
      await ctx.store.writeAtomic(config, repoConfig((await treeLayout(repo)) ?? ctx.layout));
    }
    return;
  }
  // What git needs to call the directory a repository (HEAD, objects/, refs/) and objects/pack,
  // where readers list packs: every other directory (objects/xx, objects/info, refs/heads, logs)
  // is made on first use, as git does. A directory is a 4 KB block: the 256 fan-out directories
  // made up front were 1 MB of a 3-turn session's 1.2 MB (issue 22).
  for (const d of ['objects/pack', 'refs']) await ctx.store.mkdirp(joinPath(repo.gitdir, d));
  await ctx.store.writeAtomic(joinPath(repo.gitdir, 'config'), repoConfig(ctx.layout));
  // HEAD last: its presence is what makes the directory a repository.
  await ctx.store.writeAtomic(joinPath(repo.gitdir, 'HEAD'), 'ref: refs/heads/main\n');
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
  const { formatFromTrees, backUpFormat1 } = (await ctx.onDemand()) as typeof import('./format-1.js');
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
export async function repoLayout(ctx: MirrorContext, repo: Repo): Promise<Layout> {
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
