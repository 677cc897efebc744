import { createHash } from 'node:crypto';
import type { ChangedPath } from '../index.js';

/** `"…"` with C escapes, as `git hash-object --stdin-paths` unquotes a line. */
export function cQuote(path: string): string {
  let out = '"';
  for (const ch of path) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (c < 0x20 || c === 0x7f) out += `\\${c.toString(8).padStart(3, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

export function blobId(content: Uint8Array): string {
  return createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
}

/** `git status --porcelain=v2 -z` output as the seam's changes: one entry per path, sorted by path. */
export function parseStatus(out: string): ChangedPath[] {
  return mergedByPath(porcelainChanges(out.split('\0')));
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
