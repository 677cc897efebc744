import { configBool, configValue, EntityGitError, type GitConfig, joinPath, unsupportedIndex } from '@entity-git/git';
import { operationsInProgress } from '../operations.js';
import type { WorkdirState } from '../project-git-engine.js';
import { OBJECT_ENGINE, type RepoFiles } from './repo-files.js';

/** Repository format extensions whose repositories read and write like plain version-0 ones. */
const HARMLESS_EXTENSIONS = new Set(['noop', 'preciousobjects', 'partialclone', 'worktreeconfig']);

const parent = (p: string) => {
  const i = p.lastIndexOf('/');
  return i <= 0 ? '/' : p.slice(0, i);
};

/**
 * Discovery as git does it: at each level up from `workdir`, a `.git`, else the directory itself
 * as a git directory (bare). Null when there is none up to the root.
 */
export async function discover(
  files: RepoFiles,
  workdir: string,
): Promise<{ root: string; gitdir: string } | { kind: 'bare'; gitdir: string } | null> {
  for (let dir = workdir; ; dir = parent(dir)) {
    const found = await files.dotGit(dir);
    if (found !== null) return { root: dir, gitdir: found };
    // A `.git` git cannot use stops discovery with an error in git too: never a reason to init, or to look further up.
    if ((await files.store.lstat(joinPath(dir, '.git'))) !== null) {
      throw new EntityGitError(
        'PROJECT_GIT_ERROR',
        `[${OBJECT_ENGINE}] ${dir}/.git is not a git directory git could use`,
        { workdir, dir },
      );
    }
    if (await files.isGitDir(dir)) return { kind: 'bare', gitdir: dir };
    if (dir === '/' || parent(dir) === dir) return null;
  }
}

/** Where a repository was found: its root, its git directory, and the workdir inside it. */
export interface FoundRepository {
  readonly workdir: string;
  readonly root: string;
  readonly gitdir: string;
}

/** The repository at `root` (git directory `gitdir`) as seen from `workdir`: HEAD, branch, operations, what is unsupported. */
export async function repositoryState(
  files: RepoFiles,
  { workdir, root, gitdir }: FoundRepository,
): Promise<WorkdirState> {
  const commonDir = await files.commonDirOf(gitdir);
  const config = await files.loadConfig(commonDir, gitdir);
  // A linked worktree of a bare repository has a working tree all the same.
  if (configBool(config, 'core.bare', false) && commonDir === gitdir) return { kind: 'bare', gitdir };
  const head = ((await files.readText(joinPath(gitdir, 'HEAD'))) ?? '').trim();
  const refs = files.userRefs(commonDir);
  let branch: string | null = null;
  let headOid: string | null = null;
  if (head.startsWith('ref: ')) {
    const target = head.slice(5).trim();
    branch = target.startsWith('refs/heads/') ? target : null;
    headOid = await refs.resolve(target);
  } else headOid = head;
  const operations = await operationsInProgress(
    async (n) => (await files.store.lstat(joinPath(gitdir, n))) !== null,
    (n) => files.readText(joinPath(gitdir, n)),
  );
  const prefix = workdir === root ? '' : workdir.slice(root === '/' ? 1 : root.length + 1);
  const unsupported = await unsupportedReason(files, { root, gitdir, commonDir, config });
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
      operations,
      unsupported,
    },
  };
}

/** Why the object engine cannot work safely on this repository, or null. */
async function unsupportedReason(
  files: RepoFiles,
  at: { root: string; gitdir: string; commonDir: string; config: GitConfig },
): Promise<string | null> {
  const { config } = at;
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
  for (const attributes of [joinPath(at.root, '.gitattributes'), joinPath(at.commonDir, 'info', 'attributes')]) {
    if (/(^|\s)filter=/m.test((await files.readText(attributes)) ?? ''))
      return 'a clean/smudge filter in the git attributes (e.g. Git LFS)';
  }
  try {
    return unsupportedIndex((await files.readIndex(at.gitdir)).index);
  } catch (err) {
    return files.fail('read the index', err, { gitdir: at.gitdir });
  }
}
