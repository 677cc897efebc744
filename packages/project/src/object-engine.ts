import {
  buildCommit,
  EntityGitError,
  fsErrorCode,
  isAncestor,
  isEntityGitError,
  joinPath,
  parseCommit,
  parseReflog,
  type ReflogEntry,
  refsUnder,
  type StorageStat,
} from '@entity-git/git';
import type {
  ChangedPath,
  CommitDone,
  CommitRecord,
  CommitRequest,
  FileState,
  IndexUpdate,
  ProjectGitEngine,
  RepoState,
  UndoDone,
  UndoRequest,
  WorkdirState,
} from './project-git-engine.js';
import { applicableUpdates } from './project-git-engine.js';
import { normalizeAbsolute } from './paths.js';
import { applyToTree, checkExpected, EMPTY_TREE, entriesAt, moveBranch, storeTrees } from './object-engine/commit.js';
import { discover, repositoryState } from './object-engine/discovery.js';
import { nextIndex } from './object-engine/index-entries.js';
import { type Captured, OBJECT_ENGINE, type ObjectEngineOptions, RepoFiles } from './object-engine/repo-files.js';
import { type Flat, flatTree, StatusScan } from './object-engine/status.js';
import { diffTrees } from './object-engine/tree-diff.js';
import { movedPaths, revertCommit, type UndoPlace, writeEntries } from './object-engine/undo.js';

export { OBJECT_ENGINE, type ObjectEngineOptions } from './object-engine/repo-files.js';

const NEW_REPOSITORY_CONFIG =
  '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n';

/**
 * The project-git engine over any `StorageFs` — the browser's, and Node's when no git binary
 * exists — built on entity-git's own object layer (`@entity-git/git`: loose objects and packs),
 * reading what git reads and writing the way git writes: loose objects through temp+rename, the
 * branch under `<ref>.lock` with an old-value check and a reflog, the index under `index.lock`.
 * isomorphic-git's own `statusMatrix`/`add`/`commit` are not used: they read index versions 2–3
 * only, know no linked worktrees, and write the index and refs in place without git's lock files.
 *
 * Limits (each reported as `unsupported` where it matters): no clean/smudge filters (a repository
 * whose attributes name a `filter=` is unsupported) and no `core.autocrlf` conversion (unsupported
 * when set); `.gitattributes` `text`/`eol` conversion is not applied (bytes are committed as they
 * are); ignore rules come from `.gitignore` files and `.git/info/exclude`, not `core.excludesFile`.
 */
export class ObjectEngine implements ProjectGitEngine {
  readonly name = OBJECT_ENGINE;
  readonly #files: RepoFiles;

  constructor(options: ObjectEngineOptions) {
    this.#files = new RepoFiles(options);
  }

  async inspect(workdirInput: string): Promise<WorkdirState> {
    const files = this.#files;
    const workdir = normalizeAbsolute(workdirInput);
    let st: StorageStat;
    try {
      st = await files.fs.stat(workdir);
    } catch (err) {
      const code = fsErrorCode(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' };
      return files.fail(`stat ${workdir}`, err, { workdir });
    }
    if (!st.isDirectory()) return { kind: 'not-a-directory' };
    const found = await discover(files, workdir);
    if (found === null) return { kind: 'not-a-repository', entries: (await files.store.readdir(workdir)).sort() };
    if ('kind' in found) return found;
    return repositoryState(files, { workdir, root: found.root, gitdir: found.gitdir });
  }

  async status(repo: RepoState): Promise<ChangedPath[]> {
    const files = this.#files;
    const [{ index, mtime: indexStat }, head, fileMode] = await Promise.all([
      files.readIndex(repo.gitdir).catch((err) => files.fail('read the index', err)),
      flatTree(files.objects(repo.commonDir), repo.head),
      files.fileModeOf(repo),
    ]);
    const submoduleChanged = (dir: string, recorded: string) => this.#submoduleChanged(dir, recorded);
    const scan = new StatusScan({ files, repo, fileMode, submoduleChanged });
    scan.indexAgainstHead(index, head);
    await scan.worktreeAgainstIndex(indexStat);
    await scan.untracked();
    return scan.changes();
  }

  async #submoduleChanged(dir: string, recorded: string): Promise<boolean> {
    const inner = await this.inspect(dir).catch(() => null);
    // Not checked out (an empty directory): git counts an uninitialized submodule as unchanged.
    if (inner === null || inner.kind !== 'repository' || inner.repo.root !== dir) return false;
    if (inner.repo.head !== recorded) return true;
    return (await this.status(inner.repo)).length > 0;
  }

  async hashPaths(repo: RepoState, paths: readonly string[]): Promise<FileState[]> {
    const fileMode = await this.#files.fileModeOf(repo);
    const out: FileState[] = [];
    for (const path of paths) out.push((await this.#files.capture(repo.root, path, fileMode, undefined)).state);
    return out;
  }

  async init(workdirInput: string, options: { readonly initialBranch?: string }): Promise<void> {
    const { store, fs } = this.#files;
    const workdir = normalizeAbsolute(workdirInput);
    const gitdir = joinPath(workdir, '.git');
    try {
      // Create-or-fail, so an init never writes into a `.git` someone else made meanwhile.
      await fs.mkdir(gitdir);
    } catch (err) {
      this.#files.fail(`init ${workdir}`, err, { workdir });
    }
    for (const d of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags', 'info'])
      await store.mkdirp(joinPath(gitdir, d));
    await store.writeAtomic(joinPath(gitdir, 'config'), NEW_REPOSITORY_CONFIG);
    await store.writeAtomic(
      joinPath(gitdir, 'description'),
      "Unnamed repository; edit this file 'description' to name the repository.\n",
    );
    await store.writeAtomic(joinPath(gitdir, 'HEAD'), `ref: refs/heads/${options.initialBranch ?? 'main'}\n`);
  }

  async commit(repo: RepoState, req: CommitRequest): Promise<CommitDone | null> {
    const files = this.#files;
    if (repo.branch === null)
      throw new EntityGitError('PROJECT_GIT_ERROR', `[${OBJECT_ENGINE}] no branch to commit on (HEAD is detached)`);
    const branch = repo.branch;
    const objects = files.objects(repo.commonDir);
    const fileMode = await files.fileModeOf(repo);
    // The index lock first, as git commit takes it: a user's git that holds it makes us wait, never the reverse.
    return files.underIndexLock(repo.gitdir, async (writeIndex) => {
      const headNow = ((await files.readText(joinPath(repo.gitdir, 'HEAD'))) ?? '').trim();
      if (headNow !== `ref: ${branch}`)
        throw new EntityGitError('REF_CONFLICT', `[${OBJECT_ENGINE}] HEAD no longer names ${branch}`, { branch });
      const { index, mtime: indexStat } = await files.readIndex(repo.gitdir);
      const indexModes = new Map(index.entries.filter((e) => e.stage === 0).map((e) => [e.path, e.mode]));
      const captured: Captured[] = [];
      for (const path of req.paths) captured.push(await files.capture(repo.root, path, fileMode, indexModes.get(path)));
      if (req.expect) checkExpected(captured, req.expect);
      const changes = new Map<string, Flat | null>();
      for (const c of captured) {
        if (c.data !== null && c.state.oid !== null) await objects.write('blob', c.data);
        changes.set(c.state.path, c.state.oid === null ? null : { mode: c.state.mode!, oid: c.state.oid });
      }
      const headTree = repo.head === null ? null : parseCommit(await objects.readTyped(repo.head, 'commit')).tree;
      const tree =
        (await applyToTree(storeTrees(objects), headTree, changes)) ?? (await objects.write('tree', new Uint8Array(0)));
      if (tree === (headTree ?? EMPTY_TREE)) return null;
      const parents = repo.head === null ? [] : [repo.head];
      const { author, committer, message } = req;
      const commit = await objects.write('commit', buildCommit({ tree, parents, author, committer, message }));
      if (req.beforeBranchMoves) await req.beforeBranchMoves(commit);
      const who = { name: committer.name, email: committer.email };
      await moveBranch(files, repo, { to: commit, who, message: req.reflogMessage });
      await writeIndex(nextIndex(index, indexStat, captured));
      return { commit, tree, parent: repo.head, branch, entries: captured.map((c) => c.state) };
    });
  }

  async treeEntries(repo: RepoState, commit: string | null, paths: readonly string[]): Promise<FileState[]> {
    if (commit === null) return paths.map((path) => ({ path, oid: null, mode: null }));
    return entriesAt(this.#files.objects(repo.commonDir), commit, paths);
  }

  async updateIndex(repo: RepoState, updates: readonly IndexUpdate[]): Promise<Array<FileState | null>> {
    const files = this.#files;
    const fileMode = await files.fileModeOf(repo);
    return files.underIndexLock(repo.gitdir, async (writeIndex) => {
      const { index, mtime: indexStat } = await files.readIndex(repo.gitdir);
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
        const c =
          u.entry.oid === null ? null : await files.capture(repo.root, u.path, fileMode, parseInt(u.entry.mode!, 8));
        const holds = c !== null && c.state.oid === u.entry.oid && c.state.mode === u.entry.mode;
        set.push({ state: u.entry, st: holds ? c.st : null });
      }
      await writeIndex(nextIndex(index, indexStat, set));
      return found;
    });
  }

  async history(repo: RepoState, from: string, max: number): Promise<CommitRecord[]> {
    const objects = this.#files.objects(repo.commonDir);
    const out: CommitRecord[] = [];
    for (let id: string | undefined = from; id !== undefined && out.length < max; ) {
      let record: CommitRecord;
      try {
        const o = await objects.read(id);
        if (o.type !== 'commit') break;
        record = { id, ...parseCommit(o.content) };
      } catch (err) {
        // A shallow clone's boundary (or an id the repository lacks) ends the line.
        if (isEntityGitError(err, 'OBJECT_NOT_FOUND')) break;
        throw err;
      }
      out.push(record);
      id = record.parents[0];
    }
    return out;
  }

  async changedPaths(repo: RepoState, from: string | null, to: string): Promise<string[]> {
    const objects = this.#files.objects(repo.commonDir);
    const treeOf = async (commit: string | null) =>
      commit === null ? null : parseCommit(await objects.readTyped(commit, 'commit')).tree;
    return (await diffTrees(objects, await treeOf(from), await treeOf(to))).map((c) => c.path);
  }

  async remoteRefsContaining(repo: RepoState, commit: string): Promise<string[]> {
    const objects = this.#files.objects(repo.commonDir);
    const out: string[] = [];
    for (const [ref, oid] of await refsUnder(this.#files.store, repo.commonDir, 'refs/remotes/'))
      if (await isAncestor(objects, commit, oid)) out.push(ref);
    return out;
  }

  async reflog(repo: RepoState, ref: string): Promise<ReflogEntry[]> {
    return parseReflog((await this.#files.readText(joinPath(repo.commonDir, 'logs', ref))) ?? '');
  }

  async undo(repo: RepoState, req: UndoRequest): Promise<UndoDone> {
    const files = this.#files;
    if (repo.branch === null || repo.head === null)
      throw new EntityGitError('PROJECT_GIT_ERROR', `[${OBJECT_ENGINE}] no branch commit to undo on`);
    const { branch, head } = repo;
    if (req.entries.some((e) => e.mode === '120000') && !files.fs.symlink)
      throw new EntityGitError(
        'PROJECT_GIT_ERROR',
        `[${OBJECT_ENGINE}] the undo restores a symbolic link and this file system cannot make links`,
      );
    const objects = files.objects(repo.commonDir);
    const refs = files.userRefs(repo.commonDir);
    const place: UndoPlace = { files, repo, fileMode: await files.fileModeOf(repo) };
    return files.underIndexLock(repo.gitdir, async (writeIndex) => {
      const headNow = ((await files.readText(joinPath(repo.gitdir, 'HEAD'))) ?? '').trim();
      if (headNow !== `ref: ${branch}` || (await refs.resolve(branch)) !== head)
        throw new EntityGitError('REF_CONFLICT', `[${OBJECT_ENGINE}] ${branch} moved meanwhile`, { branch });
      const { index, mtime: indexStat } = await files.readIndex(repo.gitdir);
      const changed = await movedPaths(place, index.entries, req.expect);
      if (changed.length > 0)
        throw new EntityGitError(
          'WORKTREE_CHANGED',
          `[${OBJECT_ENGINE}] ${changed.join(', ')} changed since the undo was decided`,
          { paths: changed },
        );
      const target = req.to.kind === 'reset' ? req.to.commit : await revertCommit(objects, head, req.entries, req.to);
      if (req.beforeBranchMoves) await req.beforeBranchMoves(target);
      await moveBranch(files, repo, { to: target, who: req.who, message: req.reflogMessage });
      await writeIndex(nextIndex(index, indexStat, await writeEntries(place, objects, req.entries)));
      return { commit: target, parent: head, branch };
    });
  }
}

/** The object engine over `options.storage` (or `options.fs`); `INVALID_OPTION` without either. */
export function createObjectEngine(options: ObjectEngineOptions): ProjectGitEngine {
  return new ObjectEngine(options);
}
