import * as fsp from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { EntityGitError } from '@entity-git/core';
import { fsErrorCode, parseCommit, parseReflog, type ReflogEntry } from '@entity-git/git';
import {
  operationsInProgress,
  type ChangedPath,
  type CommitRecord,
  type FileState,
  type RepoOperation,
  type RepoState,
  type WorkdirState,
} from '../index.js';
import { EMPTY_TREE, NATIVE_GIT_ENGINE, failure, type GitProcess } from './native-git-process.js';
import { blobId, cQuote, parseStatus } from './native-git-status.js';

/**
 * What the native engine reads, through git and never writing: the workdir's repository
 * (`rev-parse`), its changes (`status --porcelain=v2`), files hashed as `git add` would, a commit's
 * tree entries, a first-parent line, a tree diff, remote-tracking refs, a reflog.
 * {@link NativeGitEngine} adds the writes.
 *
 * The seam's methods are arrow fields, bound to the engine: an engine is a value others wrap
 * (`Object.create(engine, { undo: … })` races a user's git in the tests), and a wrapper calls
 * them with a `this` that has none of the private fields.
 */
export class NativeGitReads {
  readonly #proc: GitProcess;

  constructor(proc: GitProcess) {
    this.#proc = proc;
  }

  readonly inspect = async (workdir: string): Promise<WorkdirState> => {
    let st;
    try {
      st = await fsp.stat(workdir);
    } catch (err) {
      const code = fsErrorCode(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' };
      throw new EntityGitError(
        'PROJECT_GIT_ERROR',
        `[${NATIVE_GIT_ENGINE}] cannot stat ${workdir}: ${(err as Error).message}`,
        { workdir },
        { cause: err },
      );
    }
    if (!st.isDirectory()) return { kind: 'not-a-directory' };
    const facts = [
      '--absolute-git-dir',
      '--is-bare-repository',
      '--is-inside-git-dir',
      '--is-inside-work-tree',
      '--show-object-format',
    ];
    let r = await this.#proc.run(workdir, ['rev-parse', ...facts, '--show-toplevel', '--show-prefix']);
    if (r.code !== 0) r = await this.#proc.run(workdir, ['rev-parse', ...facts]);
    if (r.code !== 0) {
      // Only git's plain "no repository here or above" means that; naming a path, it found a broken one.
      if (/not a git repository \(or any/i.test(r.stderr)) {
        // A `.git` git cannot read is a damaged repository, not an invitation to init over it.
        if (await exists(join(workdir, '.git'))) throw failure(workdir, ['rev-parse'], r);
        return { kind: 'not-a-repository', entries: (await fsp.readdir(workdir)).sort() };
      }
      throw failure(workdir, ['rev-parse'], r);
    }
    const [gitdir = '', bare, insideGitDir, insideWorkTree, objectFormat, root, prefix = ''] = r.stdout
      .toString('utf8')
      .split('\n');
    if (bare === 'true' || insideGitDir === 'true' || insideWorkTree !== 'true' || root === undefined)
      return { kind: 'bare', gitdir };
    const commonRel = (await fsp.readFile(join(gitdir, 'commondir'), 'utf8').catch(() => null))?.trim();
    const commonDir = commonRel ? resolve(gitdir, commonRel) : gitdir;
    const [sym, head, ops] = await Promise.all([
      this.#proc.run(root, ['symbolic-ref', '-q', 'HEAD']),
      this.#proc.run(root, ['rev-parse', '-q', '--verify', 'HEAD^{commit}']),
      operations(gitdir),
    ]);
    const ref = sym.code === 0 ? sym.stdout.toString('utf8').trim() : '';
    const repo: RepoState = {
      root,
      prefix: prefix.replace(/\/+$/, ''),
      gitdir,
      commonDir,
      linkedWorktree: commonDir !== gitdir,
      branch: ref.startsWith('refs/heads/') ? ref : null,
      head: head.code === 0 ? head.stdout.toString('utf8').trim() : null,
      operations: ops,
      unsupported: objectFormat === 'sha1' ? null : `a ${objectFormat} repository`,
    };
    return { kind: 'repository', repo };
  };

  readonly status = async (repo: RepoState): Promise<ChangedPath[]> => {
    const args = ['status', '--porcelain=v2', '-z', '--untracked-files=all', '--no-renames'];
    const out = await this.#proc.run(repo.root, args);
    if (out.code !== 0) throw failure(repo.root, ['status'], out);
    return parseStatus(out.stdout.toString('utf8'));
  };

  readonly hashPaths = async (repo: RepoState, paths: readonly string[]): Promise<FileState[]> => {
    const states = new Map<string, FileState>();
    const files: string[] = [];
    const modes = new Map<string, string>();
    for (const path of paths) {
      const full = join(repo.root, path);
      const st = await fsp.lstat(full).catch((err) => {
        const code = fsErrorCode(err);
        if (code === 'ENOENT' || code === 'ENOTDIR') return null;
        throw new EntityGitError(
          'PROJECT_GIT_ERROR',
          `[${NATIVE_GIT_ENGINE}] cannot stat ${full}: ${(err as Error).message}`,
          { path: full },
          { cause: err },
        );
      });
      if (st === null || st.isDirectory() || !(st.isFile() || st.isSymbolicLink()))
        states.set(path, { path, oid: null, mode: null });
      else if (st.isSymbolicLink())
        states.set(path, {
          path,
          oid: blobId(Buffer.from(await fsp.readlink(full, { encoding: 'buffer' }))),
          mode: '120000',
        });
      else {
        files.push(path);
        modes.set(path, st.mode & 0o100 ? '100755' : '100644'); // git's rule: the owner's bit alone
      }
    }
    if (files.length > 0) {
      // Through git, so the repository's clean filters and line-ending rules apply as `git add` would.
      const input = `${files.map(cQuote).join('\n')}\n`;
      const ids = (await this.#proc.git(repo.root, ['hash-object', '--stdin-paths'], { input })).trim().split('\n');
      files.forEach((path, i) => states.set(path, { path, oid: ids[i]!, mode: modes.get(path)! }));
    }
    return paths.map((p) => states.get(p)!);
  };

  readonly treeEntries = async (
    repo: RepoState,
    commit: string | null,
    paths: readonly string[],
  ): Promise<FileState[]> => {
    const found = new Map<string, FileState>();
    if (commit !== null && paths.length > 0) {
      // Without -r: a path that is a directory there shows as a tree, which is no file (absent).
      const args = ['ls-tree', '-z', '--full-tree', commit, '--', ...paths];
      for (const line of (await this.#proc.git(repo.root, args)).split('\0')) {
        const tab = line.indexOf('\t');
        if (tab < 0) continue;
        const [mode, type, oid] = line.slice(0, tab).split(' ');
        if (type !== 'tree') found.set(line.slice(tab + 1), { path: line.slice(tab + 1), oid: oid!, mode: mode! });
      }
    }
    return paths.map((p) => found.get(p) ?? { path: p, oid: null, mode: null });
  };

  readonly history = async (repo: RepoState, from: string, max: number): Promise<CommitRecord[]> => {
    const listed = await this.#proc.run(repo.root, ['rev-list', '--first-parent', `--max-count=${max}`, from, '--']);
    if (listed.code !== 0) return [];
    const ids = listed.stdout.toString('utf8').split('\n').filter(Boolean);
    // rev-list peels a tag to its commit: an id that is not itself a commit names none.
    if (ids[0] !== from) return [];
    const out = await this.#proc.run(repo.root, ['cat-file', '--batch'], { input: `${ids.join('\n')}\n` });
    return batchObjects(out.stdout)
      .filter((o) => o.type === 'commit')
      .map((o) => ({ id: o.id, ...parseCommit(o.content) }));
  };

  readonly changedPaths = async (repo: RepoState, from: string | null, to: string): Promise<string[]> => {
    const args = ['diff-tree', '-r', '-z', '--no-renames', '--name-only', from ?? EMPTY_TREE, to, '--'];
    return (await this.#proc.git(repo.root, args)).split('\0').filter(Boolean).sort();
  };

  readonly remoteRefsContaining = async (repo: RepoState, commit: string): Promise<string[]> => {
    const args = ['for-each-ref', `--contains=${commit}`, '--format=%(refname)%00%(symref)', 'refs/remotes/'];
    // A symbolic ref (refs/remotes/origin/HEAD) names a branch listed on its own.
    return (await this.#proc.git(repo.root, args))
      .split('\n')
      .map((l) => l.split('\0'))
      .filter(([ref, symref]) => ref !== undefined && ref !== '' && (symref ?? '') === '')
      .map(([ref]) => ref!)
      .sort();
  };

  readonly reflog = async (repo: RepoState, ref: string): Promise<ReflogEntry[]> => {
    return parseReflog(await fsp.readFile(join(repo.commonDir, 'logs', ref), 'utf8').catch(() => ''));
  };
}

const exists = async (p: string): Promise<boolean> => (await fsp.lstat(p).catch(() => null)) !== null;

const operations = (gitdir: string): Promise<RepoOperation[]> =>
  operationsInProgress(
    (name) => exists(join(gitdir, name)),
    (name) => fsp.readFile(join(gitdir, name), 'utf8').catch(() => null),
  );

/** `cat-file --batch` output: `<id> <type> <size>\n<content>\n` for each object asked. */
function batchObjects(out: Buffer): Array<{ id: string; type: string; content: Uint8Array }> {
  const objects: Array<{ id: string; type: string; content: Uint8Array }> = [];
  let at = 0;
  while (at < out.length) {
    const nl = out.indexOf(0x0a, at);
    if (nl < 0) break;
    const [id = '', type = '', size = ''] = out.subarray(at, nl).toString('utf8').split(' ');
    if (type === 'missing' || size === '') {
      at = nl + 1;
      continue;
    }
    const end = nl + 1 + Number(size);
    objects.push({ id, type, content: out.subarray(nl + 1, end) });
    at = end + 1;
  }
  return objects;
}
