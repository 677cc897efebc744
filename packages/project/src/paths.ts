/** `C:\x` and `\\server\x` are written with `/` by git on Windows; everything else keeps its bytes. */
const WINDOWS = /^(?:[A-Za-z]:[\\/]|\\\\)/;

export function isAbsolute(path: string): boolean {
  return path.startsWith('/') || WINDOWS.test(path);
}

/** An absolute directory path with `/` separators, no `.`/`..` segments and no trailing slash (`/` stays). */
export function normalizeAbsolute(path: string): string {
  const windows = WINDOWS.test(path);
  const p = windows ? path.replace(/\\/g, '/') : path;
  const parts = p.split('/');
  const head = windows && !p.startsWith('//') ? parts.shift()! : '';
  const out: string[] = [];
  for (const part of parts) {
    if (part === '' || part === '.') continue;
    if (part === '..') out.pop();
    else out.push(part);
  }
  return windows ? `${head}/${out.join('/')}`.replace(/\/$/, '') || `${head}/` : `/${out.join('/')}`;
}

/**
 * A relative path with `.`/`..` resolved against `base` (itself relative, `''` for the top);
 * null when it climbs above the top, is empty, or holds a NUL (no file git could name).
 */
export function joinRelative(base: string, path: string): string | null {
  if (path.includes('\0')) return null;
  const out = base === '' ? [] : base.split('/');
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length === 0) return null;
      out.pop();
    } else out.push(part);
  }
  return out.length === 0 ? null : out.join('/');
}

/** `path` relative to `dir` when it is `dir` itself (`''`) or below it; else null. Both normalized absolute. */
export function relativeTo(dir: string, path: string): string | null {
  if (path === dir) return '';
  const prefix = dir.endsWith('/') ? dir : `${dir}/`;
  return path.startsWith(prefix) ? path.slice(prefix.length) : null;
}

/**
 * A path a tool reported writing, as a repository-relative path: absolute paths are taken below the
 * workdir as the caller spelled it, else below the repository root as git spelled it (the two differ
 * when the workdir is reached through a symlink); relative ones are relative to the workdir. Null
 * for a path outside the repository, the root itself, or one git cannot name.
 */
export function toRepoPath(touched: string, workdir: string, root: string, prefix: string): string | null {
  if (typeof touched !== 'string' || touched === '' || touched.includes('\0')) return null;
  if (!isAbsolute(touched)) return joinRelative(prefix, WINDOWS.test(workdir) ? touched.replace(/\\/g, '/') : touched);
  const abs = normalizeAbsolute(touched);
  const underWorkdir = relativeTo(workdir, abs);
  if (underWorkdir !== null) return joinRelative(prefix, underWorkdir);
  const underRoot = relativeTo(root, abs);
  return underRoot === null ? null : joinRelative('', underRoot);
}

/** True when `path` is `entry` or lies below it (`entry/…`). */
export function within(path: string, entry: string): boolean {
  return path === entry || (path.length > entry.length && path.startsWith(entry) && path[entry.length] === '/');
}
