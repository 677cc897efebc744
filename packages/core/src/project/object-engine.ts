import { EntityGitError, fsErrorCode } from '../errors.js';
import { portableCodec, type Codec } from '../git/codec.js';
import { ObjectStore, buildCommit, buildTree, parseCommit, parseTree, type TreeEntry } from '../git/objects.js';
import { RefStore, ZERO_OID, acquireLockFile } from '../git/refs.js';
import type { Storage, StorageFs, StorageStat } from '../storage/storage.js';
import { Store, joinPath, utf8 } from '../storage/store.js';
import { configBool, configValue, parseGitConfig, type GitConfig } from './git-config.js';
import { isIgnored, parseIgnore, type IgnoreStack } from './gitignore.js';
import { operationsInProgress } from './operations.js';
import {
  applicableUpdates,
  type ChangedPath,
  type CommitDone,
  type CommitRequest,
  type FileState,
  type IndexUpdate,
  type ProjectGitEngine,
  type RepoState,
  type WorkdirState,
} from './project-git-engine.js';
import { normalizeAbsolute } from './paths.js';
import { readWorkIndex, unsupportedIndex, writeWorkIndex, type WorkIndex, type WorkIndexEntry } from './work-index.js';

export const ISO_GIT_ENGINE = 'isomorphic-git';

export interface IsoGitEngineOptions {
  /**
   * The storage the repositories live on. A full {@link Storage} gives create-exclusive lock files
   * that hold across processes (Node's `open(…, 'wx')`); with a bare `fs` they hold within the
   * caller's project lock only.
   */
  storage?: Storage;
  /** A bare file system, when no {@link Storage} is given. */
  fs?: StorageFs;
  /** Hashing and compression. Default: the storage's, else the portable pure-JS codec. */
  codec?: Codec;
  /** How long to wait for a `<ref>.lock` or `index.lock` another git holds. Default 10 s. */
  lockTimeoutMs?: number;
}

/** Repository format extensions whose repositories read and write like plain version-0 ones. */
const HARMLESS_EXTENSIONS = new Set(['noop', 'preciousobjects', 'partialclone', 'worktreeconfig']);
const EMPTY_BLOB = 'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391';
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
const MODE_FILE = 0o100644;
const MODE_EXEC = 0o100755;
const MODE_LINK = 0o120000;
const MODE_GITLINK = 0o160000;

const parent = (p: string) => {
  const i = p.lastIndexOf('/');
  return i <= 0 ? '/' : p.slice(0, i);
};
const resolvePath = (base: string, p: string) =>
  normalizeAbsolute(p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p) ? p : `${base}/${p}`);
const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

interface Flat {
  mode: string;
  oid: string;
}

/** Stat data as the index records it: whole seconds and nanoseconds, truncated to 32 bits. */
function statTimes(st: StorageStat): {
  mtimeSec: number;
  mtimeNsec: number;
  ctimeSec: number;
  ctimeNsec: number;
  nsExact: boolean;
} {
  const split = (ms: number, ns: bigint | undefined): [number, number] => {
    if (ns !== undefined) return [Number(ns / 1_000_000_000n), Number(ns % 1_000_000_000n)];
    const sec = Math.floor(ms / 1000);
    return [sec, Math.round((ms - sec * 1000) * 1e6)];
  };
  const [mtimeSec, mtimeNsec] = split(st.mtimeMs, st.mtimeNs);
  const [ctimeSec, ctimeNsec] = split(st.ctimeMs ?? st.mtimeMs, st.ctimeNs);
  return { mtimeSec, mtimeNsec, ctimeSec, ctimeNsec, nsExact: st.mtimeNs !== undefined };
}

function modeOf(st: StorageStat, fileMode: boolean, indexMode: number | undefined): number {
  if (st.isSymbolicLink()) return MODE_LINK;
  if (!fileMode && indexMode !== undefined && (indexMode === MODE_FILE || indexMode === MODE_EXEC)) return indexMode;
  return st.mode & 0o111 ? MODE_EXEC : MODE_FILE;
}

/**
 * The project-git engine over any {@link StorageFs} — the browser's, and Node's when no git binary
 * exists — reading what isomorphic-git reads (packed objects through it) and writing the way git
 * writes: loose objects through temp+rename, the branch under `<ref>.lock` with an old-value check
 * and a reflog, the index under `index.lock`. isomorphic-git's own `statusMatrix`/`add`/`commit`
 * are not used: they read index versions 2–3 only, know no linked worktrees, and write the index
 * and refs in place without git's lock files.
 *
 * Limits (each reported as `unsupported` where it matters): no clean/smudge filters (a repository
 * whose attributes name a `filter=` is unsupported) and no `core.autocrlf` conversion (unsupported
 * when set); `.gitattributes` `text`/`eol` conversion is not applied (bytes are committed as they
 * are); ignore rules come from `.gitignore` files and `.git/info/exclude`, not `core.excludesFile`.
 */
export function createIsoGitEngine(options: IsoGitEngineOptions): ProjectGitEngine {
  const storage: Storage = options.storage ?? { name: ISO_GIT_ENGINE, fs: options.fs! };
  if (!storage.fs) throw new EntityGitError('INVALID_OPTION', 'createIsoGitEngine needs a storage or an fs');
  const codec = options.codec ?? storage.codec ?? portableCodec;
  const store = new Store({ ...storage, codec });
  const lockTimeoutMs = options.lockTimeoutMs ?? 10_000;
  const fs = store.fs;
  // A lock file in the user's repository is git's to judge: never taken over however old (git tells the user to remove it).
  const USER_REF_OPTIONS = { lockTimeoutMs, staleLockMs: Number.POSITIVE_INFINITY };

  const fail = (what: string, err: unknown, data: Record<string, unknown> = {}): never => {
    if (err instanceof EntityGitError) throw err;
    throw new EntityGitError(
      'PROJECT_GIT_ERROR',
      `[${ISO_GIT_ENGINE}] ${what}: ${(err as Error)?.message ?? String(err)}`,
      data,
      { cause: err },
    );
  };
  const readText = (p: string) => store.readText(p);
  /** A file's text; null when absent or not a file (a `.gitignore` that is a directory counts for nothing, as in git). */
  const readFileText = async (p: string) => ((await store.lstat(p))?.isFile() ? store.readText(p) : null);
  const isDir = async (p: string) => (await store.lstat(p))?.isDirectory() === true;
  const blobOid = (content: Uint8Array) => new ObjectStore(store, '/').hash('blob', content);

  /** A git directory git would accept: HEAD, plus objects and refs (here or in the common directory). */
  async function isGitDir(dir: string): Promise<boolean> {
    const head = await readText(joinPath(dir, 'HEAD'));
    if (head === null || !(head.startsWith('ref: ') || /^[0-9a-f]{40}\s*$/.test(head))) return false;
    const common = await commonDirOf(dir);
    return (await isDir(joinPath(common, 'objects'))) && (await isDir(joinPath(common, 'refs')));
  }

  async function commonDirOf(gitdir: string): Promise<string> {
    const rel = (await readText(joinPath(gitdir, 'commondir')))?.trim();
    return rel ? resolvePath(gitdir, rel) : gitdir;
  }

  /** `<dir>/.git` as a git directory (a directory, or a `gitdir:` file), or null. */
  async function dotGit(dir: string): Promise<string | null> {
    const path = joinPath(dir, '.git');
    const st = await store.lstat(path);
    if (st === null) return null;
    if (st.isDirectory()) return (await isGitDir(path)) ? path : null;
    const text = await readText(path);
    const m = text === null ? null : /^gitdir:\s*(.+?)\s*$/m.exec(text);
    if (!m) return null;
    const gitdir = resolvePath(dir, m[1]!);
    return (await isGitDir(gitdir)) ? gitdir : null;
  }

  async function loadConfig(commonDir: string, gitdir: string): Promise<GitConfig> {
    const main = parseGitConfig((await readText(joinPath(commonDir, 'config'))) ?? '');
    if (!configBool(main, 'extensions.worktreeconfig', false)) return main;
    const merged = new Map(main);
    for (const [k, v] of parseGitConfig((await readText(joinPath(gitdir, 'config.worktree'))) ?? ''))
      merged.set(k, [...(merged.get(k) ?? []), ...v]);
    return merged;
  }

  async function readIndex(gitdir: string): Promise<{ index: WorkIndex; mtime: StorageStat | null }> {
    const path = joinPath(gitdir, 'index');
    const [data, mtime] = await Promise.all([store.read(path), store.lstat(path)]);
    if (data === null) return { index: { version: 2, entries: [], extensions: [] }, mtime: null };
    return { index: readWorkIndex(data, codec), mtime };
  }

  async function unsupportedReason(
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
      if (/(^|\s)filter=/m.test((await readText(attributes)) ?? ''))
        return 'a clean/smudge filter in the git attributes (e.g. Git LFS)';
    }
    try {
      return unsupportedIndex((await readIndex(gitdir)).index);
    } catch (err) {
      return fail('read the index', err, { gitdir });
    }
  }

  async function inspect(workdirInput: string): Promise<WorkdirState> {
    const workdir = normalizeAbsolute(workdirInput);
    let st: StorageStat;
    try {
      st = await fs.stat(workdir);
    } catch (err) {
      const code = fsErrorCode(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' };
      return fail(`stat ${workdir}`, err, { workdir });
    }
    if (!st.isDirectory()) return { kind: 'not-a-directory' };
    // Discovery as git does it: at each level up, a `.git`, else the directory itself as a git directory.
    let root: string | null = null;
    let gitdir: string | null = null;
    for (let dir = workdir; ; dir = parent(dir)) {
      const found = await dotGit(dir);
      if (found !== null) {
        root = dir;
        gitdir = found;
        break;
      }
      // A `.git` git cannot use stops discovery with an error in git too: never a reason to init, or to look further up.
      if ((await store.lstat(joinPath(dir, '.git'))) !== null) {
        throw new EntityGitError(
          'PROJECT_GIT_ERROR',
          `[${ISO_GIT_ENGINE}] ${dir}/.git is not a git directory git could use`,
          { workdir, dir },
        );
      }
      if (await isGitDir(dir)) return { kind: 'bare', gitdir: dir };
      if (dir === '/' || parent(dir) === dir) break;
    }
    if (root === null || gitdir === null) {
      return { kind: 'not-a-repository', entries: (await store.readdir(workdir)).sort() };
    }
    const commonDir = await commonDirOf(gitdir);
    const config = await loadConfig(commonDir, gitdir);
    // A linked worktree of a bare repository has a working tree all the same.
    if (configBool(config, 'core.bare', false) && commonDir === gitdir) return { kind: 'bare', gitdir };
    const head = ((await readText(joinPath(gitdir, 'HEAD'))) ?? '').trim();
    const refs = new RefStore(store, commonDir, USER_REF_OPTIONS);
    let branch: string | null = null;
    let headOid: string | null = null;
    if (head.startsWith('ref: ')) {
      const target = head.slice(5).trim();
      branch = target.startsWith('refs/heads/') ? target : null;
      headOid = await refs.resolve(target);
    } else headOid = head;
    const ops = await operationsInProgress(
      async (n) => (await store.lstat(joinPath(gitdir!, n))) !== null,
      (n) => readText(joinPath(gitdir!, n)),
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
        unsupported: await unsupportedReason(root, gitdir, commonDir, config),
      },
    };
  }

  /** HEAD's tree as path → mode and blob (gitlinks included), read through the object layer. */
  async function flatTree(objects: ObjectStore, commit: string | null): Promise<Map<string, Flat>> {
    const out = new Map<string, Flat>();
    if (commit === null) return out;
    const walk = async (tree: string, prefix: string): Promise<void> => {
      for (const e of parseTree(await objects.readTyped(tree, 'tree'))) {
        const path = prefix + e.name;
        if (e.mode === '40000') await walk(e.oid, `${path}/`);
        else out.set(path, { mode: e.mode, oid: e.oid });
      }
    };
    await walk(parseCommit(await objects.readTyped(commit, 'commit')).tree, '');
    return out;
  }

  async function worktreeOid(full: string, st: StorageStat): Promise<string | null> {
    if (st.isSymbolicLink()) {
      if (!fs.readlink) return null;
      return blobOid(utf8(await fs.readlink(full)));
    }
    if (!st.isFile()) return null;
    const data = await store.read(full);
    return data === null ? null : blobOid(data);
  }

  /** Whether stat data proves the file unchanged since the index entry was written (git's racy-git rule included). */
  function statClean(e: WorkIndexEntry, st: StorageStat, indexStat: StorageStat | null): boolean {
    const t = statTimes(st);
    if (st.size >>> 0 !== e.size || st.ino >>> 0 !== e.ino) return false;
    if (e.size === 0 && e.oid !== EMPTY_BLOB) return false;
    if (t.mtimeSec >>> 0 !== e.mtimeSec || t.ctimeSec >>> 0 !== e.ctimeSec) return false;
    if (
      t.nsExact
        ? t.mtimeNsec !== e.mtimeNsec || t.ctimeNsec !== e.ctimeNsec
        : Math.floor(t.mtimeNsec / 1e6) !== Math.floor(e.mtimeNsec / 1e6)
    )
      return false;
    if (indexStat === null) return false;
    // Written in the same instant as the index (or later): the stat data cannot tell a change apart.
    const it = statTimes(indexStat);
    return e.mtimeSec < it.mtimeSec || (e.mtimeSec === it.mtimeSec && e.mtimeNsec < it.mtimeNsec);
  }

  async function mapLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
    let next = 0;
    const worker = async () => {
      while (next < items.length) await fn(items[next++]!);
    };
    await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  }

  async function submoduleChanged(dir: string, recorded: string): Promise<boolean> {
    const inner = await inspect(dir).catch(() => null);
    // Not checked out (an empty directory): git counts an uninitialized submodule as unchanged.
    if (inner === null || inner.kind !== 'repository' || inner.repo.root !== dir) return false;
    if (inner.repo.head !== recorded) return true;
    return (await status(inner.repo)).length > 0;
  }

  async function status(repo: RepoState): Promise<ChangedPath[]> {
    const objects = new ObjectStore(store, repo.commonDir);
    const fileMode = await fileModeOf(repo);
    const [{ index, mtime: indexStat }, head] = await Promise.all([
      readIndex(repo.gitdir).catch((err) => fail('read the index', err)),
      flatTree(objects, repo.head),
    ]);
    const flags = new Map<
      string,
      { staged: boolean; unstaged: boolean; untracked: boolean; conflicted: boolean; submodule: boolean }
    >();
    const mark = (
      path: string,
      f: Partial<{ staged: boolean; unstaged: boolean; untracked: boolean; conflicted: boolean; submodule: boolean }>,
    ) => {
      const cur = flags.get(path) ?? {
        staged: false,
        unstaged: false,
        untracked: false,
        conflicted: false,
        submodule: false,
      };
      flags.set(path, {
        staged: cur.staged || !!f.staged,
        unstaged: cur.unstaged || !!f.unstaged,
        untracked: cur.untracked || !!f.untracked,
        conflicted: cur.conflicted || !!f.conflicted,
        submodule: cur.submodule || !!f.submodule,
      });
    };

    const stage0 = new Map<string, WorkIndexEntry>();
    const tracked = new Set<string>();
    const trackedDirs = new Set<string>(['']);
    for (const e of index.entries) {
      tracked.add(e.path);
      for (let i = e.path.indexOf('/'); i > 0; i = e.path.indexOf('/', i + 1)) trackedDirs.add(e.path.slice(0, i));
      if (e.stage === 0) stage0.set(e.path, e);
      else mark(e.path, { conflicted: true, staged: true, unstaged: true });
    }
    // Staged: the index against HEAD.
    for (const [path, e] of stage0) {
      const h = head.get(path);
      if (e.intentToAdd) mark(path, { unstaged: true });
      else if (!h || h.oid !== e.oid || parseInt(h.mode, 8) !== e.mode)
        mark(path, { staged: true, submodule: e.mode === MODE_GITLINK || h?.mode === '160000' });
    }
    for (const [path, h] of head) if (!tracked.has(path)) mark(path, { staged: true, submodule: h.mode === '160000' });
    // Unstaged: the working tree against the index.
    const nowDirectories = new Set<string>();
    await mapLimit([...stage0.values()], 32, async (e) => {
      if (e.skipWorktree || e.intentToAdd) return;
      const full = joinPath(repo.root, e.path);
      if (e.mode === MODE_GITLINK) {
        if (await submoduleChanged(full, e.oid)) mark(e.path, { unstaged: true, submodule: true });
        return;
      }
      const st = await store.lstat(full);
      if (st === null || !(st.isFile() || st.isSymbolicLink())) {
        if (st?.isDirectory()) nowDirectories.add(e.path);
        mark(e.path, { unstaged: true });
        return;
      }
      if (modeOf(st, fileMode, e.mode) !== e.mode) {
        mark(e.path, { unstaged: true });
        return;
      }
      if (statClean(e, st, indexStat)) return;
      if ((await worktreeOid(full, st)) !== e.oid) mark(e.path, { unstaged: true });
    });

    // Untracked: a walk of the working tree, pruned at ignored directories and nested repositories.
    const exclude = parseIgnore((await readText(joinPath(repo.commonDir, 'info', 'exclude'))) ?? '');
    const walk = async (dir: string, stack: IgnoreStack): Promise<void> => {
      const full = dir === '' ? repo.root : joinPath(repo.root, dir);
      const names = await store.readdir(full);
      const text = names.includes('.gitignore') ? await readFileText(joinPath(full, '.gitignore')) : null;
      const here: IgnoreStack = text === null ? stack : [...stack, { dir, rules: parseIgnore(text) }];
      const subdirs: string[] = [];
      await mapLimit(names, 32, async (name) => {
        if (name === '.git') return;
        const path = dir === '' ? name : `${dir}/${name}`;
        if (tracked.has(path) && !nowDirectories.has(path)) return;
        const st = await store.lstat(joinPath(full, name));
        if (st === null) return;
        if (st.isDirectory()) {
          // Below an ignored directory nothing untracked is listed, tracked files there or not (git does not look).
          if (isIgnored(here, path, true)) return;
          if (trackedDirs.has(path)) subdirs.push(path);
          else if ((await dotGit(joinPath(full, name))) !== null) mark(path, { untracked: true, submodule: true });
          else subdirs.push(path);
        } else if (!isIgnored(here, path, false)) mark(path, { untracked: true });
      });
      for (const sub of subdirs.sort()) await walk(sub, here);
    };
    await walk('', [{ dir: '', rules: exclude }]);
    return [...flags].map(([path, f]) => ({ path, ...f })).sort(byPath);
  }

  async function hashPaths(repo: RepoState, paths: readonly string[]): Promise<FileState[]> {
    const fileMode = await fileModeOf(repo);
    const out: FileState[] = [];
    for (const path of paths) out.push((await capture(repo.root, path, fileMode, undefined)).state);
    return out;
  }

  /** A path's content as git would record it, with the stat taken before reading it (so a later write shows as a change). */
  async function capture(
    root: string,
    path: string,
    fileMode: boolean,
    indexMode: number | undefined,
  ): Promise<{ state: FileState; st: StorageStat | null; data: Uint8Array | null }> {
    const full = joinPath(root, path);
    const st = await store.lstat(full);
    if (st === null || !(st.isFile() || st.isSymbolicLink()))
      return { state: { path, oid: null, mode: null }, st: null, data: null };
    if (st.isSymbolicLink() && !fs.readlink) {
      // Recording it as absent would commit its removal.
      throw new EntityGitError(
        'PROJECT_GIT_ERROR',
        `[${ISO_GIT_ENGINE}] ${full} is a symbolic link and this file system cannot read links`,
        { path: full },
      );
    }
    const data = st.isSymbolicLink() ? utf8(await fs.readlink!(full)) : await store.read(full);
    if (data === null) return { state: { path, oid: null, mode: null }, st: null, data: null };
    return { state: { path, oid: blobOid(data), mode: modeOf(st, fileMode, indexMode).toString(8) }, st, data };
  }

  async function init(workdirInput: string, opts: { initialBranch?: string }): Promise<void> {
    const workdir = normalizeAbsolute(workdirInput);
    const gitdir = joinPath(workdir, '.git');
    const branch = opts.initialBranch ?? 'main';
    try {
      // Create-or-fail, so an init never writes into a `.git` someone else made meanwhile.
      await fs.mkdir(gitdir);
    } catch (err) {
      fail(`init ${workdir}`, err, { workdir });
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

  /** HEAD's tree with `changes` applied (null: remove). A file where a directory is needed gives way, as `update-index --replace` does. */
  async function applyToTree(
    objects: ObjectStore,
    tree: string | null,
    changes: ReadonlyMap<string, Flat | null>,
  ): Promise<string | null> {
    const entries = new Map<string, TreeEntry>();
    if (tree !== null) for (const e of parseTree(await objects.readTyped(tree, 'tree'))) entries.set(e.name, e);
    const nested = new Map<string, Map<string, Flat | null>>();
    for (const [path, value] of changes) {
      const slash = path.indexOf('/');
      if (slash < 0) {
        if (value === null) entries.delete(path);
        else entries.set(path, { mode: value.mode, name: path, oid: value.oid });
        continue;
      }
      const head = path.slice(0, slash);
      const sub = nested.get(head) ?? new Map<string, Flat | null>();
      sub.set(path.slice(slash + 1), value);
      nested.set(head, sub);
    }
    for (const [name, sub] of nested) {
      const existing = entries.get(name);
      if (changes.get(name) !== undefined && changes.get(name) !== null) continue;
      const childTree = existing?.mode === '40000' ? existing.oid : null;
      const next = await applyToTree(objects, childTree, sub);
      if (next === null) entries.delete(name);
      else entries.set(name, { mode: '40000', name, oid: next });
    }
    if (entries.size === 0) return null;
    return objects.write('tree', buildTree([...entries.values()]));
  }

  async function commit(repo: RepoState, req: CommitRequest): Promise<CommitDone | null> {
    if (repo.branch === null)
      throw new EntityGitError('PROJECT_GIT_ERROR', `[${ISO_GIT_ENGINE}] no branch to commit on (HEAD is detached)`);
    const branch = repo.branch;
    const objects = new ObjectStore(store, repo.commonDir);
    const refs = new RefStore(store, repo.commonDir, USER_REF_OPTIONS);
    const fileMode = await fileModeOf(repo);
    // The index lock first, as git commit takes it: a user's git that holds it makes us wait, never the reverse.
    return underIndexLock(repo, async (writeIndex) => {
      const headNow = ((await readText(joinPath(repo.gitdir, 'HEAD'))) ?? '').trim();
      if (headNow !== `ref: ${branch}`)
        throw new EntityGitError('REF_CONFLICT', `[${ISO_GIT_ENGINE}] HEAD no longer names ${branch}`, { branch });
      const { index, mtime: indexStat } = await readIndex(repo.gitdir);
      const indexModes = new Map(index.entries.filter((e) => e.stage === 0).map((e) => [e.path, e.mode]));
      const captured: Array<{ state: FileState; st: StorageStat | null; data: Uint8Array | null }> = [];
      for (const path of req.paths) captured.push(await capture(repo.root, path, fileMode, indexModes.get(path)));
      if (req.expect) {
        const expected = new Map(req.expect.map((f) => [f.path, f.oid]));
        const moved = captured
          .filter((c) => expected.has(c.state.path) && expected.get(c.state.path) !== c.state.oid)
          .map((c) => c.state.path);
        if (moved.length > 0)
          throw new EntityGitError(
            'WORKTREE_CHANGED',
            `[${ISO_GIT_ENGINE}] ${moved.join(', ')} changed since the agent's edit was recorded`,
            { paths: moved },
          );
      }
      const changes = new Map<string, Flat | null>();
      for (const c of captured) {
        if (c.data !== null && c.state.oid !== null) await objects.write('blob', c.data);
        changes.set(c.state.path, c.state.oid === null ? null : { mode: c.state.mode!, oid: c.state.oid });
      }
      const headTree = repo.head === null ? null : parseCommit(await objects.readTyped(repo.head, 'commit')).tree;
      const tree = (await applyToTree(objects, headTree, changes)) ?? (await objects.write('tree', new Uint8Array(0)));
      if (tree === (headTree ?? EMPTY_TREE)) return null;
      const commitId = await objects.write(
        'commit',
        buildCommit({
          tree,
          parents: repo.head === null ? [] : [repo.head],
          author: req.author,
          committer: req.committer,
          message: req.message,
        }),
      );
      const who = { name: req.committer.name, email: req.committer.email };
      if (req.beforeBranchMoves) await req.beforeBranchMoves(commitId);
      await refs.update(branch, commitId, {
        old: repo.head,
        reflog: { who, message: req.reflogMessage, alsoHead: !repo.linkedWorktree },
      });
      if (repo.linkedWorktree) {
        const line = `${repo.head ?? ZERO_OID} ${commitId} ${who.name} <${who.email}> ${Math.floor(Date.now() / 1000)} +0000\t${req.reflogMessage.replace(/\n/g, ' ')}\n`;
        await store.append(joinPath(repo.gitdir, 'logs', 'HEAD'), line);
      }
      await writeIndex(nextIndex(index, indexStat, captured));
      const entries = captured.map((c) => c.state);
      return { commit: commitId, tree, parent: repo.head, branch, entries };
    });
  }

  async function treeEntries(repo: RepoState, commit: string | null, paths: readonly string[]): Promise<FileState[]> {
    const absent = (path: string): FileState => ({ path, oid: null, mode: null });
    if (commit === null) return paths.map(absent);
    const objects = new ObjectStore(store, repo.commonDir);
    const root = parseCommit(await objects.readTyped(commit, 'commit')).tree;
    const trees = new Map<string, TreeEntry[]>();
    const entriesOf = async (tree: string) => {
      let e = trees.get(tree);
      if (e === undefined) trees.set(tree, (e = parseTree(await objects.readTyped(tree, 'tree'))));
      return e;
    };
    const out: FileState[] = [];
    for (const path of paths) {
      let tree: string | null = root;
      let found: FileState = absent(path);
      const parts = path.split('/');
      for (let i = 0; i < parts.length && tree !== null; i++) {
        const e: TreeEntry | undefined = (await entriesOf(tree)).find((x) => x.name === parts[i]);
        tree = null;
        if (e === undefined) break;
        if (i < parts.length - 1) tree = e.mode === '40000' ? e.oid : null;
        else if (e.mode !== '40000') found = { path, oid: e.oid, mode: e.mode };
      }
      out.push(found);
    }
    return out;
  }

  async function updateIndex(repo: RepoState, updates: readonly IndexUpdate[]): Promise<Array<FileState | null>> {
    const fileMode = await fileModeOf(repo);
    return underIndexLock(repo, async (writeIndex) => {
      const { index, mtime: indexStat } = await readIndex(repo.gitdir);
      const found = updates.map((u): FileState | null => {
        const at = index.entries.filter((e) => e.path === u.path);
        if (at.some((e) => e.stage !== 0)) return null;
        const e = at[0];
        return e === undefined
          ? { path: u.path, oid: null, mode: null }
          : { path: u.path, oid: e.oid, mode: e.mode.toString(8) };
      });
      const apply = applicableUpdates(updates, found);
      if (apply.length === 0) return found;
      const set: Array<{ state: FileState; st: StorageStat | null }> = [];
      for (const u of apply) {
        // Stat data only when the working file holds exactly the entry (as git's refresh would record it); else none, so it is hashed.
        const c = u.entry.oid === null ? null : await capture(repo.root, u.path, fileMode, parseInt(u.entry.mode!, 8));
        set.push({
          state: u.entry,
          st: c !== null && c.state.oid === u.entry.oid && c.state.mode === u.entry.mode ? c.st : null,
        });
      }
      await writeIndex(nextIndex(index, indexStat, set));
      return found;
    });
  }

  /** `core.filemode` of the repository (whether the executable bit is tracked). */
  async function fileModeOf(repo: RepoState): Promise<boolean> {
    return configBool(await loadConfig(repo.commonDir, repo.gitdir), 'core.filemode', true);
  }

  /**
   * Run `fn` holding the repository's `index.lock` — waited for while someone else holds it, never
   * taken over. `fn` writes the new index through `writeIndex` (renamed over the index); a lock it
   * did not turn into the index is removed.
   */
  async function underIndexLock<T>(
    repo: RepoState,
    fn: (writeIndex: (index: WorkIndex) => Promise<void>) => Promise<T>,
  ): Promise<T> {
    const indexPath = joinPath(repo.gitdir, 'index');
    const lockPath = `${indexPath}.lock`;
    await acquireLockFile(store, lockPath, '', { timeoutMs: lockTimeoutMs, staleMs: Number.POSITIVE_INFINITY });
    let held = true;
    try {
      return await fn(async (index) => {
        await fs.writeFile(lockPath, writeWorkIndex(index, codec));
        await fs.rename(lockPath, indexPath);
        held = false;
      });
    } finally {
      if (held) await store.remove(lockPath);
    }
  }

  /** The index with exactly the given paths set (stat data included where known, so status stays fast), racily-clean entries smudged. */
  function nextIndex(
    index: WorkIndex,
    indexStat: StorageStat | null,
    captured: ReadonlyArray<{ state: FileState; st: StorageStat | null }>,
  ): WorkIndex {
    const paths = new Set(captured.map((c) => c.state.path));
    const added = captured.filter((c) => c.state.oid !== null).map((c) => c.state.path);
    const it = indexStat === null ? null : statTimes(indexStat);
    const entries = index.entries
      .filter((e) => !paths.has(e.path))
      // A committed file replaces a directory of entries, and a committed entry a file where its directory is.
      .filter((e) => !added.some((p) => e.path.startsWith(`${p}/`) || p.startsWith(`${e.path}/`)))
      .map((e) => {
        const racy =
          it !== null && (e.mtimeSec > it.mtimeSec || (e.mtimeSec === it.mtimeSec && e.mtimeNsec >= it.mtimeNsec));
        return racy && e.oid !== EMPTY_BLOB ? { ...e, size: 0 } : e;
      });
    for (const c of captured) {
      if (c.state.oid === null) continue;
      // Without stat data (as `update-index --index-info` leaves an entry) the file is hashed to compare.
      const t = c.st === null ? { ctimeSec: 0, ctimeNsec: 0, mtimeSec: 0, mtimeNsec: 0 } : statTimes(c.st);
      entries.push({
        ctimeSec: t.ctimeSec,
        ctimeNsec: t.ctimeNsec,
        mtimeSec: t.mtimeSec,
        mtimeNsec: t.mtimeNsec,
        dev: c.st?.dev ?? 0,
        ino: c.st?.ino ?? 0,
        mode: parseInt(c.state.mode!, 8),
        uid: c.st?.uid ?? 0,
        gid: c.st?.gid ?? 0,
        size: c.st?.size ?? 0,
        oid: c.state.oid,
        stage: 0,
        assumeValid: false,
        skipWorktree: false,
        intentToAdd: false,
        path: c.state.path,
      });
    }
    return { version: index.version, entries, extensions: index.extensions };
  }

  return Object.freeze({ name: ISO_GIT_ENGINE, inspect, status, hashPaths, init, commit, treeEntries, updateIndex });
}
