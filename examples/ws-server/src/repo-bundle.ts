// A session repository's files in one body (`GET /repo/<session>`, read by the browser's "Save
// for offline"): the magic line, then per file its path (relative to the .git directory, `/`
// separated) and its bytes, each preceded by its length as a 32-bit big-endian number. No Node
// API: the page decodes it too, and writes only the paths this check lets through.

/** The HTTP path prefix of the route; the session id follows, URI-encoded. */
export const REPO_PATH = '/repo/';
/** Where the browser sends the token it was given: `Authorization: Bearer <token>`. */
export const REPO_AUTH_SCHEME = 'Bearer';
export const REPO_BUNDLE_TYPE = 'application/x-entity-git-repo';
const MAGIC = new TextEncoder().encode('entity-git repo 1\n');

export interface RepoFile {
  /** Relative to the repository's .git directory, `/` separated. */
  path: string;
  data: Uint8Array;
}

/** A path the page may write under a .git directory: relative, no `.`/`..`/empty segment, no `\` or NUL. */
export function isSafeRepoPath(path: string): boolean {
  if (path === '' || path.length > 1024 || path.includes('\\') || path.includes('\0')) return false;
  return path.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}

export function encodeRepoBundle(files: readonly RepoFile[]): Uint8Array {
  const names = files.map((f) => new TextEncoder().encode(f.path));
  let size = MAGIC.length;
  files.forEach((f, i) => {
    size += 8 + names[i]!.length + f.data.length;
  });
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  out.set(MAGIC, 0);
  let at = MAGIC.length;
  files.forEach((f, i) => {
    view.setUint32(at, names[i]!.length);
    out.set(names[i]!, at + 4);
    at += 4 + names[i]!.length;
    view.setUint32(at, f.data.length);
    out.set(f.data, at + 4);
    at += 4 + f.data.length;
  });
  return out;
}

/** The files of a bundle; throws a TypeError on anything malformed (a bad magic, a cut body, an unsafe path). */
export function decodeRepoBundle(bytes: Uint8Array): RepoFile[] {
  const bad = (why: string): never => {
    throw new TypeError(`[entity-git] not a repository bundle: ${why}`);
  };
  if (bytes.length < MAGIC.length || MAGIC.some((b, i) => bytes[i] !== b)) bad('wrong magic');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: RepoFile[] = [];
  const decoder = new TextDecoder('utf-8', { fatal: true });
  for (let at = MAGIC.length; at < bytes.length; ) {
    if (at + 4 > bytes.length) bad('cut in a path length');
    const n = view.getUint32(at);
    if (at + 4 + n + 4 > bytes.length) bad('cut in a path');
    const path = decoder.decode(bytes.subarray(at + 4, at + 4 + n));
    if (!isSafeRepoPath(path)) bad(`unsafe path ${JSON.stringify(path)}`);
    at += 4 + n;
    const size = view.getUint32(at);
    if (at + 4 + size > bytes.length) bad(`cut in ${path}`);
    out.push({ path, data: bytes.subarray(at + 4, at + 4 + size) });
    at += 4 + size;
  }
  return out;
}
