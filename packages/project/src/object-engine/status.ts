import { isIgnored, joinPath, type ObjectStore, parseCommit, parseIgnore, parseTree } from '@entity-git/git';
import type { IgnoreStack, StorageStat, WorkIndex, WorkIndexEntry } from '@entity-git/git';
import type { ChangedPath, RepoState } from '../project-git-engine.js';
import { statClean } from './index-entries.js';
import type { RepoFiles } from './repo-files.js';
import { MODE_GITLINK, modeOf } from './worktree.js';

/** A path and its blob in a tree (mode as the tree writes it). */
export interface Flat {
  mode: string;
  oid: string;
}

interface Flags {
  staged: boolean;
  unstaged: boolean;
  untracked: boolean;
  conflicted: boolean;
  submodule: boolean;
}

const NO_FLAGS: Flags = { staged: false, unstaged: false, untracked: false, conflicted: false, submodule: false };

const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/** A commit's tree as path → mode and blob (gitlinks included), read through the object layer; empty for null. */
export async function flatTree(objects: ObjectStore, commit: string | null): Promise<Map<string, Flat>> {
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

async function mapLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export interface StatusScanOptions {
  readonly files: RepoFiles;
  readonly repo: RepoState;
  /** `core.filemode` of the repository. */
  readonly fileMode: boolean;
  /** Whether the submodule checked out at `dir` differs from the commit `recorded` in the index. */
  readonly submoduleChanged: (dir: string, recorded: string) => Promise<boolean>;
}

/**
 * One `git status` in progress: the flags of every changed path so far, and what the index
 * tracks. Filled in three passes, in order: the index against HEAD, the working tree against the
 * index, then the untracked files.
 */
export class StatusScan {
  readonly #o: StatusScanOptions;
  readonly #flags = new Map<string, Flags>();
  readonly #stage0 = new Map<string, WorkIndexEntry>();
  readonly #paths = new Set<string>();
  readonly #dirs = new Set<string>(['']);
  /** Tracked paths that are directories in the working tree now. */
  readonly #nowDirectories = new Set<string>();

  constructor(options: StatusScanOptions) {
    this.#o = options;
  }

  /** Set flags of `path` (each flag only ever turns on). */
  #mark(path: string, f: Partial<Flags>): void {
    const cur = this.#flags.get(path) ?? NO_FLAGS;
    this.#flags.set(path, {
      staged: cur.staged || !!f.staged,
      unstaged: cur.unstaged || !!f.unstaged,
      untracked: cur.untracked || !!f.untracked,
      conflicted: cur.conflicted || !!f.conflicted,
      submodule: cur.submodule || !!f.submodule,
    });
  }

  /** Staged: the index against HEAD's tree. */
  indexAgainstHead(index: WorkIndex, head: ReadonlyMap<string, Flat>): void {
    for (const e of index.entries) {
      this.#paths.add(e.path);
      for (let i = e.path.indexOf('/'); i > 0; i = e.path.indexOf('/', i + 1)) this.#dirs.add(e.path.slice(0, i));
      if (e.stage === 0) this.#stage0.set(e.path, e);
      else this.#mark(e.path, { conflicted: true, staged: true, unstaged: true });
    }
    for (const [path, e] of this.#stage0) {
      const h = head.get(path);
      if (e.intentToAdd) this.#mark(path, { unstaged: true });
      else if (!h || h.oid !== e.oid || parseInt(h.mode, 8) !== e.mode)
        this.#mark(path, { staged: true, submodule: e.mode === MODE_GITLINK || h?.mode === '160000' });
    }
    for (const [path, h] of head)
      if (!this.#paths.has(path)) this.#mark(path, { staged: true, submodule: h.mode === '160000' });
  }

  /** Unstaged: the working tree against the index (stat data first, the content only when it cannot tell). */
  async worktreeAgainstIndex(indexStat: StorageStat | null): Promise<void> {
    const { files, repo, fileMode } = this.#o;
    await mapLimit([...this.#stage0.values()], 32, async (e) => {
      if (e.skipWorktree || e.intentToAdd) return;
      const full = joinPath(repo.root, e.path);
      if (e.mode === MODE_GITLINK) {
        if (await this.#o.submoduleChanged(full, e.oid)) this.#mark(e.path, { unstaged: true, submodule: true });
        return;
      }
      const st = await files.store.lstat(full);
      if (st === null || !(st.isFile() || st.isSymbolicLink())) {
        if (st?.isDirectory()) this.#nowDirectories.add(e.path);
        this.#mark(e.path, { unstaged: true });
        return;
      }
      if (modeOf(st, fileMode, e.mode) !== e.mode) {
        this.#mark(e.path, { unstaged: true });
        return;
      }
      if (statClean(e, st, indexStat)) return;
      if ((await files.worktreeOid(full, st)) !== e.oid) this.#mark(e.path, { unstaged: true });
    });
  }

  /** Untracked: a walk of the working tree, pruned at ignored directories and nested repositories. */
  async untracked(): Promise<void> {
    const { files, repo } = this.#o;
    const exclude = parseIgnore((await files.readText(joinPath(repo.commonDir, 'info', 'exclude'))) ?? '');
    await this.#walk('', [{ dir: '', rules: exclude }]);
  }

  async #walk(dir: string, stack: IgnoreStack): Promise<void> {
    const { files, repo } = this.#o;
    const full = dir === '' ? repo.root : joinPath(repo.root, dir);
    const names = await files.store.readdir(full);
    const text = names.includes('.gitignore') ? await files.readFileText(joinPath(full, '.gitignore')) : null;
    const here: IgnoreStack = text === null ? stack : [...stack, { dir, rules: parseIgnore(text) }];
    const subdirs: string[] = [];
    await mapLimit(names, 32, async (name) => {
      if (name === '.git') return;
      const path = dir === '' ? name : `${dir}/${name}`;
      if (this.#paths.has(path) && !this.#nowDirectories.has(path)) return;
      const st = await files.store.lstat(joinPath(full, name));
      if (st === null) return;
      if (st.isDirectory()) {
        // Below an ignored directory nothing untracked is listed, tracked files there or not (git does not look).
        if (isIgnored(here, path, true)) return;
        if (this.#dirs.has(path)) subdirs.push(path);
        else if ((await files.dotGit(joinPath(full, name))) !== null)
          this.#mark(path, { untracked: true, submodule: true });
        else subdirs.push(path);
      } else if (!isIgnored(here, path, false)) this.#mark(path, { untracked: true });
    });
    for (const sub of subdirs.sort()) await this.#walk(sub, here);
  }

  /** Every changed path found, sorted. */
  changes(): ChangedPath[] {
    return [...this.#flags].map(([path, f]) => ({ path, ...f })).sort(byPath);
  }
}
