import { ObjectStore, parseCommit, parseTree, type StorageStat, joinPath } from '@entity-git/git';
import { isIgnored, parseIgnore, type IgnoreStack } from '@entity-git/git';
import type { ChangedPath, RepoState } from '../project-git-engine.js';
import type { WorkIndexEntry } from '@entity-git/git';
import type { EngineContext, Flat } from './context.js';
import type { Discovery } from './discovery.js';
import { EMPTY_BLOB, statTimes, type IndexIo } from './index-io.js';
import { MODE_GITLINK, modeOf, type Worktree } from './worktree.js';

const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/** The parts of the object engine `git status` reads through. */
interface StatusDeps {
  readonly ctx: EngineContext;
  readonly io: IndexIo;
  readonly disc: Discovery;
  readonly wt: Worktree;
}

interface Flags {
  staged: boolean;
  unstaged: boolean;
  untracked: boolean;
  conflicted: boolean;
  submodule: boolean;
}

/** Set flags of `path` (each flag only ever turns on). */
type Mark = (path: string, f: Partial<Flags>) => void;

/** What the index tracks: its stage-0 entries, every path (any stage) and every directory above one. */
interface Tracked {
  readonly stage0: Map<string, WorkIndexEntry>;
  readonly paths: Set<string>;
  readonly dirs: Set<string>;
}

/** `git status`: the index against HEAD, the working tree against the index, and the untracked files. */
export function statusOf(ctx: EngineContext, io: IndexIo, disc: Discovery, wt: Worktree) {
  const deps: StatusDeps = Object.freeze({ ctx, io, disc, wt });
  return (repo: RepoState): Promise<ChangedPath[]> => status(deps, repo);
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

async function submoduleChanged(deps: StatusDeps, dir: string, recorded: string): Promise<boolean> {
  const inner = await deps.disc.inspect(dir).catch(() => null);
  // Not checked out (an empty directory): git counts an uninitialized submodule as unchanged.
  if (inner === null || inner.kind !== 'repository' || inner.repo.root !== dir) return false;
  if (inner.repo.head !== recorded) return true;
  return (await status(deps, inner.repo)).length > 0;
}

/** The flags of every changed path, and the one way to set them. */
function flagSet(): { flags: Map<string, Flags>; mark: Mark } {
  const flags = new Map<string, Flags>();
  const mark: Mark = (path, f) => {
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
  return { flags, mark };
}

async function status(deps: StatusDeps, repo: RepoState): Promise<ChangedPath[]> {
  const { store, fail } = deps.ctx;
  const objects = new ObjectStore(store, repo.commonDir);
  const fileMode = await deps.disc.fileModeOf(repo);
  const [{ index, mtime: indexStat }, head] = await Promise.all([
    deps.io.readIndex(repo.gitdir).catch((err) => fail('read the index', err)),
    flatTree(objects, repo.head),
  ]);
  const { flags, mark } = flagSet();

  const tracked: Tracked = { stage0: new Map(), paths: new Set(), dirs: new Set(['']) };
  for (const e of index.entries) {
    tracked.paths.add(e.path);
    for (let i = e.path.indexOf('/'); i > 0; i = e.path.indexOf('/', i + 1)) tracked.dirs.add(e.path.slice(0, i));
    if (e.stage === 0) tracked.stage0.set(e.path, e);
    else mark(e.path, { conflicted: true, staged: true, unstaged: true });
  }
  // Staged: the index against HEAD.
  for (const [path, e] of tracked.stage0) {
    const h = head.get(path);
    if (e.intentToAdd) mark(path, { unstaged: true });
    else if (!h || h.oid !== e.oid || parseInt(h.mode, 8) !== e.mode)
      mark(path, { staged: true, submodule: e.mode === MODE_GITLINK || h?.mode === '160000' });
  }
  for (const [path, h] of head)
    if (!tracked.paths.has(path)) mark(path, { staged: true, submodule: h.mode === '160000' });
  const nowDirectories = await unstaged(deps, repo, fileMode, tracked.stage0, indexStat, mark);
  await untracked(deps, repo, tracked, nowDirectories, mark);
  return [...flags].map(([path, f]) => ({ path, ...f })).sort(byPath);
}

/** Unstaged: the working tree against the index. Resolves the tracked paths that are directories now. */
async function unstaged(
  deps: StatusDeps,
  repo: RepoState,
  fileMode: boolean,
  stage0: ReadonlyMap<string, WorkIndexEntry>,
  indexStat: StorageStat | null,
  mark: Mark,
): Promise<Set<string>> {
  const { store } = deps.ctx;
  const nowDirectories = new Set<string>();
  await mapLimit([...stage0.values()], 32, async (e) => {
    if (e.skipWorktree || e.intentToAdd) return;
    const full = joinPath(repo.root, e.path);
    if (e.mode === MODE_GITLINK) {
      if (await submoduleChanged(deps, full, e.oid)) mark(e.path, { unstaged: true, submodule: true });
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
    if ((await deps.wt.worktreeOid(full, st)) !== e.oid) mark(e.path, { unstaged: true });
  });
  return nowDirectories;
}

/** Untracked: a walk of the working tree, pruned at ignored directories and nested repositories. */
async function untracked(
  deps: StatusDeps,
  repo: RepoState,
  tracked: Tracked,
  nowDirectories: ReadonlySet<string>,
  mark: Mark,
): Promise<void> {
  const { store, readText, readFileText } = deps.ctx;
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
      if (tracked.paths.has(path) && !nowDirectories.has(path)) return;
      const st = await store.lstat(joinPath(full, name));
      if (st === null) return;
      if (st.isDirectory()) {
        // Below an ignored directory nothing untracked is listed, tracked files there or not (git does not look).
        if (isIgnored(here, path, true)) return;
        if (tracked.dirs.has(path)) subdirs.push(path);
        else if ((await deps.disc.dotGit(joinPath(full, name))) !== null)
          mark(path, { untracked: true, submodule: true });
        else subdirs.push(path);
      } else if (!isIgnored(here, path, false)) mark(path, { untracked: true });
    });
    for (const sub of subdirs.sort()) await walk(sub, here);
  };
  await walk('', [{ dir: '', rules: exclude }]);
}
