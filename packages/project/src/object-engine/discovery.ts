import { EntityGitError, fsErrorCode, RefStore, type StorageStat, joinPath } from '@entity-git/git';
import { configBool, configValue, parseGitConfig, type GitConfig } from '@entity-git/git';
import { operationsInProgress } from '../operations.js';
import type { RepoState, WorkdirState } from '../project-git-engine.js';
import { normalizeAbsolute } from '../paths.js';
import { unsupportedIndex } from '@entity-git/git';
import { OBJECT_ENGINE, type EngineContext } from './context.js';
import type { IndexIo } from './index-io.js';

/** Repository format extensions whose repositories read and write like plain version-0 ones. */
const HARMLESS_EXTENSIONS = new Set(['noop', 'preciousobjects', 'partialclone', 'worktreeconfig']);

const parent = (p: string) => {
  const i = p.lastIndexOf('/');
  return i <= 0 ? '/' : p.slice(0, i);
};
const resolvePath = (base: string, p: string) =>
  normalizeAbsolute(p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p) ? p : `${base}/${p}`);

/** Finding a repository as git does (and what in it this engine cannot handle), reading its config, making a new one. */
export function discovery(ctx: EngineContext, io: IndexIo) {
  return {
    isGitDir: (dir: string) => isGitDir(ctx, dir),
    commonDirOf: (gitdir: string) => commonDirOf(ctx, gitdir),
    dotGit: (dir: string) => dotGit(ctx, dir),
    loadConfig: (commonDir: string, gitdir: string) => loadConfig(ctx, commonDir, gitdir),
    inspect: (workdir: string) => inspect(ctx, io, workdir),
    init: (workdir: string, opts: { initialBranch?: string }) => init(ctx, workdir, opts),
    fileModeOf: (repo: RepoState) => fileModeOf(ctx, repo),
  };
}

export type Discovery = ReturnType<typeof discovery>;

/** A git directory git would accept: HEAD, plus objects and refs (here or in the common directory). */
async function isGitDir(ctx: EngineContext, dir: string): Promise<boolean> {
  const head = await ctx.readText(joinPath(dir, 'HEAD'));
  if (head === null || !(head.startsWith('ref: ') || /^[0-9a-f]{40}\s*$/.test(head))) return false;
  const common = await commonDirOf(ctx, dir);
  return (await ctx.isDir(joinPath(common, 'objects'))) && (await ctx.isDir(joinPath(common, 'refs')));
}

async function commonDirOf(ctx: EngineContext, gitdir: string): Promise<string> {
  const rel = (await ctx.readText(joinPath(gitdir, 'commondir')))?.trim();
  return rel ? resolvePath(gitdir, rel) : gitdir;
}

/** `<dir>/.git` as a git directory (a directory, or a `gitdir:` file), or null. */
async function dotGit(ctx: EngineContext, dir: string): Promise<string | null> {
  const path = joinPath(dir, '.git');
  const st = await ctx.store.lstat(path);
  if (st === null) return null;
  if (st.isDirectory()) return (await isGitDir(ctx, path)) ? path : null;
  const text = await ctx.readText(path);
  const m = text === null ? null : /^gitdir:\s*(.+?)\s*$/m.exec(text);
  if (!m) return null;
  const gitdir = resolvePath(dir, m[1]!);
  return (await isGitDir(ctx, gitdir)) ? gitdir : null;
}

async function loadConfig(ctx: EngineContext, commonDir: string, gitdir: string): Promise<GitConfig> {
  const main = parseGitConfig((await ctx.readText(joinPath(commonDir, 'config'))) ?? '');
  if (!configBool(main, 'extensions.worktreeconfig', false)) return main;
  const merged = new Map(main);
  for (const [k, v] of parseGitConfig((await ctx.readText(joinPath(gitdir, 'config.worktree'))) ?? ''))
    merged.set(k, [...(merged.get(k) ?? []), ...v]);
  return merged;
}

async function unsupportedReason(
  ctx: EngineContext,
  { readIndex }: IndexIo,
  root: string,
  gitdir: string,
  commonDir: string,
  config: GitConfig,
): Promise<string | null> {
  const version = Number(configValue(config, 'core.repositoryformatversion') ?? '0');
  if (version > 1) return `repository format version ${version}`;
  if (version === 1) {
    for (const key of config.keys()) {
      if (!key.startsWith('extensions.')) continue;
      const name = key.slice('extensions.'.length);
      if (name === 'objectformat' && configValue(config, key)?.toLowerCase() === 'sha1') continue;
      if (name === 'refstorage' && configValue(config, key)?.toLowerCase() === 'files') continue;
      if (!HARMLESS_EXTENSIONS.has(name)) return `the repository extension ${name}=${configValue(config, key) ?? ''}`;
    }
  }
  const autocrlf = configValue(config, 'core.autocrlf')?.toLowerCase();
  if (autocrlf !== undefined && autocrlf !== 'false')
    return `core.autocrlf=${autocrlf} (line endings are not converted by this engine)`;
  for (const attributes of [joinPath(root, '.gitattributes'), joinPath(commonDir, 'info', 'attributes')]) {
    if (/(^|\s)filter=/m.test((await ctx.readText(attributes)) ?? ''))
      return 'a clean/smudge filter in the git attributes (e.g. Git LFS)';
  }
  try {
    return unsupportedIndex((await readIndex(gitdir)).index);
  } catch (err) {
    return ctx.fail('read the index', err, { gitdir });
  }
}

async function inspect(ctx: EngineContext, io: IndexIo, workdirInput: string): Promise<WorkdirState> {
  const workdir = normalizeAbsolute(workdirInput);
  let st: StorageStat;
  try {
    st = await ctx.fs.stat(workdir);
  } catch (err) {
    const code = fsErrorCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' };
    return ctx.fail(`stat ${workdir}`, err, { workdir });
  }
  if (!st.isDirectory()) return { kind: 'not-a-directory' };
  const found = await discover(ctx, workdir);
  if (found === null) return { kind: 'not-a-repository', entries: (await ctx.store.readdir(workdir)).sort() };
  if ('kind' in found) return found;
  return repositoryState(ctx, io, workdir, found.root, found.gitdir);
}

/**
 * Discovery as git does it: at each level up from `workdir`, a `.git`, else the directory itself
 * as a git directory (bare). Null when there is none up to the root.
 */
async function discover(
  ctx: EngineContext,
  workdir: string,
): Promise<{ root: string; gitdir: string } | { kind: 'bare'; gitdir: string } | null> {
  for (let dir = workdir; ; dir = parent(dir)) {
    const found = await dotGit(ctx, dir);
    if (found !== null) return { root: dir, gitdir: found };
    // A `.git` git cannot use stops discovery with an error in git too: never a reason to init, or to look further up.
    if ((await ctx.store.lstat(joinPath(dir, '.git'))) !== null) {
      throw new EntityGitError(
        'PROJECT_GIT_ERROR',
        `[${OBJECT_ENGINE}] ${dir}/.git is not a git directory git could use`,
        { workdir, dir },
      );
    }
    if (await isGitDir(ctx, dir)) return { kind: 'bare', gitdir: dir };
    if (dir === '/' || parent(dir) === dir) return null;
  }
}

/** The repository at `root` (git directory `gitdir`) as seen from `workdir`: HEAD, branch, operations, what is unsupported. */
async function repositoryState(
  ctx: EngineContext,
  io: IndexIo,
  workdir: string,
  root: string,
  gitdir: string,
): Promise<WorkdirState> {
  const { store, readText } = ctx;
  const commonDir = await commonDirOf(ctx, gitdir);
  const config = await loadConfig(ctx, commonDir, gitdir);
  // A linked worktree of a bare repository has a working tree all the same.
  if (configBool(config, 'core.bare', false) && commonDir === gitdir) return { kind: 'bare', gitdir };
  const head = ((await readText(joinPath(gitdir, 'HEAD'))) ?? '').trim();
  const refs = new RefStore(store, commonDir, ctx.USER_REF_OPTIONS);
  let branch: string | null = null;
  let headOid: string | null = null;
  if (head.startsWith('ref: ')) {
    const target = head.slice(5).trim();
    branch = target.startsWith('refs/heads/') ? target : null;
    headOid = await refs.resolve(target);
  } else headOid = head;
  const ops = await operationsInProgress(
    async (n) => (await store.lstat(joinPath(gitdir, n))) !== null,
    (n) => readText(joinPath(gitdir, n)),
  );
  const prefix = workdir === root ? '' : workdir.slice(root === '/' ? 1 : root.length + 1);
  return {
    kind: 'repository',
    repo: {
      root,
      prefix,
      gitdir,
      commonDir,
      linkedWorktree: commonDir !== gitdir,
      branch,
      head: headOid,
      operations: ops,
      unsupported: await unsupportedReason(ctx, io, root, gitdir, commonDir, config),
    },
  };
}

async function init(ctx: EngineContext, workdirInput: string, opts: { initialBranch?: string }): Promise<void> {
  const { store } = ctx;
  const workdir = normalizeAbsolute(workdirInput);
  const gitdir = joinPath(workdir, '.git');
  const branch = opts.initialBranch ?? 'main';
  try {
    // Create-or-fail, so an init never writes into a `.git` someone else made meanwhile.
    await ctx.fs.mkdir(gitdir);
  } catch (err) {
    ctx.fail(`init ${workdir}`, err, { workdir });
  }
  for (const d of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags', 'info'])
    await store.mkdirp(joinPath(gitdir, d));
  await store.writeAtomic(
    joinPath(gitdir, 'config'),
    '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n',
  );
  await store.writeAtomic(
    joinPath(gitdir, 'description'),
    "Unnamed repository; edit this file 'description' to name the repository.\n",
  );
  await store.writeAtomic(joinPath(gitdir, 'HEAD'), `ref: refs/heads/${branch}\n`);
}

/** `core.filemode` of the repository (whether the executable bit is tracked). */
async function fileModeOf(ctx: EngineContext, repo: RepoState): Promise<boolean> {
  return configBool(await loadConfig(ctx, repo.commonDir, repo.gitdir), 'core.filemode', true);
}
