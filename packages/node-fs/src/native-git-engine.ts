import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  applicableUpdates,
  EntityGitError,
  createIsoGitEngine,
  operationsInProgress,
  type ChangedPath,
  type CommitDone,
  type CommitRequest,
  type FileState,
  type IndexUpdate,
  type ProjectGitEngine,
  type RepoOperation,
  type RepoState,
  type WorkdirState,
} from '@entity-git/core';
import { nodeCodec, nodeStorage } from './node-storage.js';

export const NATIVE_GIT_ENGINE = 'native-git';

/** git 2.29 added `rev-parse --show-object-format`; older binaries are passed over for the isomorphic-git engine. */
const MIN_VERSION = [2, 29] as const;
const ZERO = '0'.repeat(40);
const NO_HOOKS = process.platform === 'win32' ? 'NUL' : '/dev/null';
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

export interface NativeGitEngineOptions {
  /** The git binary. Default `git` (found on PATH). */
  gitPath?: string;
  /** How long one git command may run. Default 120 s. */
  timeoutMs?: number;
  /** How long to wait for someone else's `index.lock` when setting the agent's paths in the index. Default 10 s. */
  indexLockTimeoutMs?: number;
}

/** Variables a hook or a wrapping git process may have set, which would point our git elsewhere. */
const KEPT_GIT_VARIABLES = new Set([
  'GIT_CONFIG_GLOBAL',
  'GIT_CONFIG_SYSTEM',
  'GIT_CONFIG_NOSYSTEM',
  'GIT_EXEC_PATH',
  'GIT_CEILING_DIRECTORIES',
]);

function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_') || KEPT_GIT_VARIABLES.has(k)) env[k] = v;
  return {
    ...env,
    LC_ALL: 'C',
    GIT_TERMINAL_PROMPT: '0',
    // `git status` would otherwise refresh and rewrite the index: an index write on a skip.
    GIT_OPTIONAL_LOCKS: '0',
    // Paths are file names, never globs (a file named `*.ts` is that one file).
    GIT_LITERAL_PATHSPECS: '1',
    // A commit is built on what the objects are, not on what refs/replace/ says they are.
    GIT_NO_REPLACE_OBJECTS: '1',
  };
}

interface Run {
  stdout: Buffer;
  stderr: string;
  code: number;
}

/** `"…"` with C escapes, as `git hash-object --stdin-paths` unquotes a line. */
function cQuote(path: string): string {
  let out = '"';
  for (const ch of path) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (c < 0x20 || c === 0x7f) out += `\\${c.toString(8).padStart(3, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

function blobId(content: Uint8Array): string {
  return createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
}

const fsErrorCode = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | null)?.code;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Native git behind the project-git seam: `git` spawned with `execFile` (never a shell), the
 * environment cleaned of `GIT_*` variables that would redirect it, optional locks off so reads
 * never rewrite the index. A commit is built in a temporary index (`GIT_INDEX_FILE`) from HEAD plus
 * exactly the agent's paths, made with `commit-tree` (no hook runs, nothing is signed), and lands
 * with `update-ref <branch> <new> <old>`; then `update-index --index-info` sets those paths, and
 * only those, in the real index.
 */
export function nativeGitEngine(options: NativeGitEngineOptions = {}): ProjectGitEngine {
  const opts = Object.freeze({ gitPath: 'git', timeoutMs: 120_000, indexLockTimeoutMs: 10_000, ...options });

  function run(
    cwd: string,
    args: string[],
    extra: { input?: string | Buffer; env?: NodeJS.ProcessEnv } = {},
  ): Promise<Run> {
    return new Promise((done, fail) => {
      // No hook of the user's runs for an agent commit — not even reference-transaction, which
      // update-ref would run and which could veto it (see docs/project-git.md, "Hooks").
      const child = execFile(
        opts.gitPath,
        ['-c', `core.hooksPath=${NO_HOOKS}`, ...args],
        {
          cwd,
          env: { ...baseEnv(), ...extra.env },
          encoding: 'buffer',
          maxBuffer: 1 << 30,
          timeout: opts.timeoutMs,
          windowsHide: true,
        },
        (err, stdout, stderr) => {
          const code = err
            ? typeof (err as { code?: unknown }).code === 'number'
              ? (err as { code: number }).code
              : -1
            : 0;
          if (err && code === -1) {
            fail(
              new EntityGitError(
                fsErrorCode(err) === 'ENOENT' ? 'GIT_NOT_FOUND' : 'PROJECT_GIT_ERROR',
                `[${NATIVE_GIT_ENGINE}] git ${args[0]} in ${cwd}: ${err.message}`,
                { args, cwd },
                { cause: err },
              ),
            );
            return;
          }
          done({ stdout: stdout as Buffer, stderr: (stderr as Buffer).toString('utf8'), code });
        },
      );
      child.stdin?.on('error', () => undefined);
      child.stdin?.end(extra.input ?? '');
    });
  }

  async function git(
    cwd: string,
    args: string[],
    extra: { input?: string | Buffer; env?: NodeJS.ProcessEnv } = {},
  ): Promise<string> {
    const r = await run(cwd, args, extra);
    if (r.code !== 0) throw failure(cwd, args, r);
    return r.stdout.toString('utf8');
  }

  function failure(cwd: string, args: string[], r: Run): EntityGitError {
    return new EntityGitError(
      'PROJECT_GIT_ERROR',
      `[${NATIVE_GIT_ENGINE}] git ${args[0]} failed in ${cwd} (exit ${r.code}): ${r.stderr.trim().split('\n').slice(-3).join(' / ')}`,
      { args, cwd, exit: r.code, stderr: r.stderr },
    );
  }

  const exists = async (p: string): Promise<boolean> => (await fsp.lstat(p).catch(() => null)) !== null;

  const operations = (gitdir: string): Promise<RepoOperation[]> =>
    operationsInProgress(
      (name) => exists(join(gitdir, name)),
      (name) => fsp.readFile(join(gitdir, name), 'utf8').catch(() => null),
    );

  async function inspect(workdir: string): Promise<WorkdirState> {
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
    let r = await run(workdir, ['rev-parse', ...facts, '--show-toplevel', '--show-prefix']);
    if (r.code !== 0) r = await run(workdir, ['rev-parse', ...facts]);
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
      run(root, ['symbolic-ref', '-q', 'HEAD']),
      run(root, ['rev-parse', '-q', '--verify', 'HEAD^{commit}']),
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
  }

  async function status(repo: RepoState): Promise<ChangedPath[]> {
    const out = await run(repo.root, ['status', '--porcelain=v2', '-z', '--untracked-files=all', '--no-renames']);
    if (out.code !== 0) throw failure(repo.root, ['status'], out);
    const fields = out.stdout.toString('utf8').split('\0');
    const changes: ChangedPath[] = [];
    for (let i = 0; i < fields.length; i++) {
      const line = fields[i]!;
      if (line === '') continue;
      const kind = line[0];
      if (kind === '?') {
        // Only a nested repository is listed as a directory (with --untracked-files=all).
        const nested = line.endsWith('/');
        changes.push({
          path: line.slice(2).replace(/\/$/, ''),
          staged: false,
          unstaged: false,
          untracked: true,
          conflicted: false,
          submodule: nested,
        });
      } else if (kind === '1' || kind === '2' || kind === 'u') {
        // 1 XY sub mH mI mW hH hI path | 2 … X<score> path\0orig | u XY sub m1 m2 m3 mW h1 h2 h3 path
        const parts = line.split(' ');
        const skip = kind === '1' ? 8 : kind === '2' ? 9 : 10;
        const path = parts.slice(skip).join(' ');
        const xy = parts[1] ?? '..';
        const sub = parts[2] ?? 'N...';
        changes.push({
          path,
          staged: xy[0] !== '.',
          unstaged: xy[1] !== '.',
          untracked: false,
          conflicted: kind === 'u',
          submodule: sub.startsWith('S'),
        });
        if (kind === '2') {
          const orig = fields[++i] ?? '';
          changes.push({
            path: orig,
            staged: true,
            unstaged: false,
            untracked: false,
            conflicted: false,
            submodule: false,
          });
        }
      }
    }
    // A path deleted in the index and present in the working tree is listed twice (staged, untracked): one entry.
    const merged = new Map<string, ChangedPath>();
    for (const c of changes) {
      const m = merged.get(c.path);
      merged.set(
        c.path,
        m === undefined
          ? c
          : {
              path: c.path,
              staged: m.staged || c.staged,
              unstaged: m.unstaged || c.unstaged,
              untracked: m.untracked || c.untracked,
              conflicted: m.conflicted || c.conflicted,
              submodule: m.submodule || c.submodule,
            },
      );
    }
    return [...merged.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  async function hashPaths(repo: RepoState, paths: readonly string[]): Promise<FileState[]> {
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
        modes.set(path, st.mode & 0o111 ? '100755' : '100644');
      }
    }
    if (files.length > 0) {
      // Through git, so the repository's clean filters and line-ending rules apply as `git add` would.
      const ids = (
        await git(repo.root, ['hash-object', '--stdin-paths'], { input: `${files.map(cQuote).join('\n')}\n` })
      )
        .trim()
        .split('\n');
      files.forEach((path, i) => states.set(path, { path, oid: ids[i]!, mode: modes.get(path)! }));
    }
    return paths.map((p) => states.get(p)!);
  }

  async function init(workdir: string, options: { initialBranch?: string }): Promise<void> {
    await git(workdir, ['init', '-q', ...(options.initialBranch ? [`--initial-branch=${options.initialBranch}`] : [])]);
  }

  function refError(root: string, args: string[], r: Run): EntityGitError {
    if (/but expected|reference already exists|unable to resolve reference|is at [0-9a-f]+ but/i.test(r.stderr)) {
      return new EntityGitError(
        'REF_CONFLICT',
        `[${NATIVE_GIT_ENGINE}] the branch moved meanwhile: ${r.stderr.trim()}`,
        { args, stderr: r.stderr },
      );
    }
    if (/\.lock'?: File exists|Unable to create .*\.lock/i.test(r.stderr)) {
      return new EntityGitError(
        'REF_LOCKED',
        `[${NATIVE_GIT_ENGINE}] the branch is locked by another git: ${r.stderr.trim()}`,
        { args, stderr: r.stderr },
      );
    }
    return failure(root, args, r);
  }

  /** Index entries of `index` (stage 0) for `wanted`: mode and blob, or absent. */
  async function entriesOf(root: string, env: NodeJS.ProcessEnv, wanted: readonly string[]): Promise<FileState[]> {
    const want = new Set(wanted);
    const found = new Map<string, FileState>();
    for (const line of (await git(root, ['ls-files', '-s', '-z'], { env })).split('\0')) {
      const tab = line.indexOf('\t');
      if (tab < 0) continue;
      const path = line.slice(tab + 1);
      if (!want.has(path)) continue;
      const [mode, oid] = line.slice(0, tab).split(' ');
      found.set(path, { path, oid: oid!, mode: mode! });
    }
    return wanted.map((p) => found.get(p) ?? { path: p, oid: null, mode: null });
  }

  async function commit(repo: RepoState, req: CommitRequest): Promise<CommitDone | null> {
    if (repo.branch === null)
      throw new EntityGitError('PROJECT_GIT_ERROR', `[${NATIVE_GIT_ENGINE}] no branch to commit on (HEAD is detached)`);
    const branch = repo.branch;
    // git's own index lock, held from the first look to the last write, as `git commit` holds it: a
    // user's git that holds it (an amend whose editor is open, or a lock a killed git left) makes us
    // move nothing; and while we hold it no git of the user's can commit on the branch we move.
    const lock = await takeIndexLock(repo);
    let held = true;
    const dir = await fsp.mkdtemp(join(tmpdir(), 'entity-git-index-'));
    try {
      const env = { GIT_INDEX_FILE: join(dir, 'index') };
      await git(repo.root, repo.head === null ? ['read-tree', '--empty'] : ['read-tree', repo.head], { env });
      await git(repo.root, ['update-index', '--add', '--remove', '--replace', '-z', '--stdin'], {
        env,
        input: req.paths.map((p) => `${p}\0`).join(''),
      });
      const entries = await entriesOf(repo.root, env, req.paths);
      if (req.expect) {
        const expected = new Map(req.expect.map((f) => [f.path, f.oid]));
        const moved = entries.filter((e) => expected.has(e.path) && expected.get(e.path) !== e.oid);
        if (moved.length > 0)
          throw new EntityGitError(
            'WORKTREE_CHANGED',
            `[${NATIVE_GIT_ENGINE}] ${moved.map((e) => e.path).join(', ')} changed since the agent's edit was recorded`,
            { paths: moved.map((e) => e.path) },
          );
      }
      const tree = (await git(repo.root, ['write-tree'], { env })).trim();
      const headTree =
        repo.head === null ? EMPTY_TREE : (await git(repo.root, ['rev-parse', `${repo.head}^{tree}`])).trim();
      if (tree === headTree) return null;
      const who = {
        GIT_AUTHOR_NAME: req.author.name,
        GIT_AUTHOR_EMAIL: req.author.email,
        GIT_AUTHOR_DATE: `@${req.author.time} +0000`,
        GIT_COMMITTER_NAME: req.committer.name,
        GIT_COMMITTER_EMAIL: req.committer.email,
        GIT_COMMITTER_DATE: `@${req.committer.time} +0000`,
      };
      const args = ['commit-tree', tree, ...(repo.head === null ? [] : ['-p', repo.head]), '--no-gpg-sign', '-F', '-'];
      const commitId = (await git(repo.root, args, { env: who, input: req.message })).trim();
      // A checkout meanwhile would otherwise put the commit on a branch the user has left.
      const sym = await run(repo.root, ['symbolic-ref', '-q', 'HEAD']);
      if (sym.code !== 0 || sym.stdout.toString('utf8').trim() !== branch) {
        throw new EntityGitError('REF_CONFLICT', `[${NATIVE_GIT_ENGINE}] HEAD no longer names ${branch}`, { branch });
      }
      // The real index as it will be, built in a copy while the lock keeps the original still, and
      // written into the lock before the branch moves: after the move only a rename is left.
      const next = await nextIndex(repo, dir, entries);
      await fsp.writeFile(lock, next);
      if (req.beforeBranchMoves) await req.beforeBranchMoves(commitId);
      const update = ['update-ref', '-m', req.reflogMessage, branch, commitId, repo.head ?? ZERO];
      const moved = await run(repo.root, update, { env: who });
      if (moved.code !== 0) throw refError(repo.root, update, moved);
      try {
        await fsp.rename(lock, join(repo.gitdir, 'index'));
        held = false;
      } catch (err) {
        throw new EntityGitError(
          'PROJECT_GIT_ERROR',
          `[${NATIVE_GIT_ENGINE}] cannot rename ${lock} into place: ${(err as Error).message}`,
          { committed: true, lock },
          { cause: err },
        );
      }
      return { commit: commitId, tree, parent: repo.head, branch, entries };
    } finally {
      if (held) await fsp.rm(lock, { force: true });
      await fsp.rm(dir, { recursive: true, force: true });
    }
  }

  /**
   * Create `index.lock` exclusively (git's protocol), waiting up to `indexLockTimeoutMs` for
   * someone else's; never taken over, however old (a lock in the user's repository is git's to
   * judge). `REF_LOCKED` when it stays held.
   */
  async function takeIndexLock(repo: RepoState): Promise<string> {
    const lock = join(repo.gitdir, 'index.lock');
    const deadline = Date.now() + opts.indexLockTimeoutMs;
    for (let wait = 10; ; wait = Math.min(wait * 2, 250)) {
      try {
        await (await fsp.open(lock, 'wx')).close();
        return lock;
      } catch (err) {
        if (fsErrorCode(err) !== 'EEXIST')
          throw new EntityGitError(
            'PROJECT_GIT_ERROR',
            `[${NATIVE_GIT_ENGINE}] cannot create ${lock}: ${(err as Error).message}`,
            { lock },
            { cause: err },
          );
      }
      if (Date.now() > deadline) {
        throw new EntityGitError(
          'REF_LOCKED',
          `[${NATIVE_GIT_ENGINE}] the index is locked by another git (${lock} exists; if no git is running, remove it)`,
          { lock, committed: false },
        );
      }
      await sleep(wait);
    }
  }

  /** The bytes of the real index with exactly `entries` set (and their stat data refreshed), made from a copy. */
  async function nextIndex(repo: RepoState, dir: string, entries: readonly FileState[]): Promise<Buffer> {
    const copy = join(dir, 'next-index');
    const current = await fsp.readFile(join(repo.gitdir, 'index')).catch((err: unknown) => {
      if (fsErrorCode(err) === 'ENOENT') return null;
      throw err;
    });
    if (current !== null) await fsp.writeFile(copy, current);
    const env = { GIT_INDEX_FILE: copy };
    const lines = [
      ...entries.filter((e) => e.oid === null).map((e) => `0 ${ZERO}\t${e.path}\0`),
      ...entries.filter((e) => e.oid !== null).map((e) => `${e.mode} ${e.oid}\t${e.path}\0`),
    ].join('');
    await git(repo.root, ['update-index', '-z', '--index-info'], { env, input: lines });
    await run(repo.root, ['update-index', '-q', '--refresh'], { env });
    return fsp.readFile(copy);
  }

  /** `update-index --index-info` of exactly `entries` (null oid: removed) into the real index, waiting for someone else's `index.lock`; then a stat refresh. */
  async function writeIndexInfo(repo: RepoState, entries: readonly FileState[]): Promise<void> {
    // Removals first, so a file replaced by a directory (or the reverse) never meets itself.
    const lines = [
      ...entries.filter((e) => e.oid === null).map((e) => `0 ${ZERO}\t${e.path}\0`),
      ...entries.filter((e) => e.oid !== null).map((e) => `${e.mode} ${e.oid}\t${e.path}\0`),
    ].join('');
    const deadline = Date.now() + opts.indexLockTimeoutMs;
    for (let wait = 10; ; wait = Math.min(wait * 2, 250)) {
      const r = await run(repo.root, ['update-index', '-z', '--index-info'], { input: lines });
      if (r.code === 0) {
        // `--index-info` leaves the entries without stat data; git's own refresh fills it in (for
        // entries whose content matches only), so plumbing like `diff-files` sees them clean too.
        await run(repo.root, ['update-index', '-q', '--refresh']);
        return;
      }
      if (/index\.lock/.test(r.stderr) && Date.now() > deadline) {
        throw new EntityGitError(
          'REF_LOCKED',
          `[${NATIVE_GIT_ENGINE}] the index is locked by another git: ${r.stderr.trim()}`,
          { args: ['update-index', '--index-info'], stderr: r.stderr },
        );
      }
      if (!/index\.lock/.test(r.stderr)) throw failure(repo.root, ['update-index', '--index-info'], r);
      await sleep(wait);
    }
  }

  async function treeEntries(repo: RepoState, commit: string | null, paths: readonly string[]): Promise<FileState[]> {
    const found = new Map<string, FileState>();
    if (commit !== null && paths.length > 0) {
      // Without -r: a path that is a directory there shows as a tree, which is no file (absent).
      for (const line of (await git(repo.root, ['ls-tree', '-z', '--full-tree', commit, '--', ...paths])).split('\0')) {
        const tab = line.indexOf('\t');
        if (tab < 0) continue;
        const [mode, type, oid] = line.slice(0, tab).split(' ');
        if (type !== 'tree') found.set(line.slice(tab + 1), { path: line.slice(tab + 1), oid: oid!, mode: mode! });
      }
    }
    return paths.map((p) => found.get(p) ?? { path: p, oid: null, mode: null });
  }

  async function updateIndex(repo: RepoState, updates: readonly IndexUpdate[]): Promise<Array<FileState | null>> {
    if (updates.length === 0) return [];
    const wanted = new Set(updates.map((u) => u.path));
    const stage0 = new Map<string, FileState>();
    const conflicted = new Set<string>();
    for (const line of (await git(repo.root, ['ls-files', '-s', '-z', '--', ...wanted])).split('\0')) {
      const tab = line.indexOf('\t');
      if (tab < 0) continue;
      const path = line.slice(tab + 1);
      if (!wanted.has(path)) continue;
      const [mode, oid, stage] = line.slice(0, tab).split(' ');
      if (stage !== '0') conflicted.add(path);
      else stage0.set(path, { path, oid: oid!, mode: mode! });
    }
    const found = updates.map((u): FileState | null =>
      conflicted.has(u.path) ? null : (stage0.get(u.path) ?? { path: u.path, oid: null, mode: null }),
    );
    const apply = applicableUpdates(updates, found);
    if (apply.length > 0)
      await writeIndexInfo(
        repo,
        apply.map((u) => ({ ...u.entry, path: u.path })),
      );
    return found;
  }

  return Object.freeze({ name: NATIVE_GIT_ENGINE, inspect, status, hashPaths, init, commit, treeEntries, updateIndex });
}

let found: boolean | undefined;

/** Whether a usable git (≥ 2.29) is on PATH, asked once per process. */
export function nativeGitAvailable(gitPath = 'git'): boolean {
  if (found !== undefined && gitPath === 'git') return found;
  let ok = false;
  try {
    const out = execFileSync(gitPath, ['--version'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 10_000,
      windowsHide: true,
    });
    const m = /(\d+)\.(\d+)/.exec(out);
    ok =
      m !== null &&
      (Number(m[1]) > MIN_VERSION[0] || (Number(m[1]) === MIN_VERSION[0] && Number(m[2]) >= MIN_VERSION[1]));
  } catch {
    ok = false;
  }
  if (gitPath === 'git') found = ok;
  return ok;
}

/**
 * The project-git engine for Node: native git when a git ≥ 2.29 is on PATH (trusted on any real
 * repository, and fast on large trees), else the isomorphic-git engine over node:fs.
 */
export function defaultProjectGitEngine(options: NativeGitEngineOptions = {}): ProjectGitEngine {
  if (nativeGitAvailable(options.gitPath ?? 'git')) return nativeGitEngine(options);
  return createIsoGitEngine({ storage: nodeStorage(), codec: nodeCodec });
}
