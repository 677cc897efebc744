import { createHash } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { EntityGitError } from '@entity-git/core';
import type { ChangedPath, FileState, RepoState } from '../index.js';
import { fsErrorCode } from '@entity-git/git';
import { NATIVE_GIT_ENGINE, type GitProcess } from './native-git-process.js';

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

/** `git status --porcelain=v2` as the seam's changes, and files hashed as `git add` would. */
export function nativeStatus(proc: GitProcess) {
  return {
    status: (repo: RepoState) => status(proc, repo),
    hashPaths: (repo: RepoState, paths: readonly string[]) => hashPaths(proc, repo, paths),
  };
}

async function status({ run, failure }: GitProcess, repo: RepoState): Promise<ChangedPath[]> {
  const out = await run(repo.root, ['status', '--porcelain=v2', '-z', '--untracked-files=all', '--no-renames']);
  if (out.code !== 0) throw failure(repo.root, ['status'], out);
  return mergedByPath(porcelainChanges(out.stdout.toString('utf8').split('\0')));
}

/** The records of `git status --porcelain=v2 -z`, one change each (a rename's original path its own). */
function porcelainChanges(fields: readonly string[]): ChangedPath[] {
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
  return changes;
}

/** The changes with one entry per path, sorted by path. */
function mergedByPath(changes: readonly ChangedPath[]): ChangedPath[] {
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

async function hashPaths({ git }: GitProcess, repo: RepoState, paths: readonly string[]): Promise<FileState[]> {
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
    const ids = (await git(repo.root, ['hash-object', '--stdin-paths'], { input: `${files.map(cQuote).join('\n')}\n` }))
      .trim()
      .split('\n');
    files.forEach((path, i) => states.set(path, { path, oid: ids[i]!, mode: modes.get(path)! }));
  }
  return paths.map((p) => states.get(p)!);
}
