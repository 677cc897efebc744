import type {
  AuthCallback,
  AuthFailureCallback,
  AuthSuccessCallback,
  GitAuth,
  HttpClient,
  PromiseFsClient,
} from 'isomorphic-git';
import {
  EntityGitError,
  fsErrorCode,
  type ErrorCode,
  concatBytes,
  ObjectStore,
  RefStore,
  type StorageFs,
  joinPath,
  type Store,
  utf8,
} from '@entity-git/git';
import { assertId, sessionDirName } from '../model/names.js';
import { redactUrl, type Remote } from './remote.js';

/** The ref that records which branch HEAD names (isomorphic-git cannot push a symbolic ref). */
export const HEAD_RECORD_REF = 'refs/entity-git/HEAD';

export interface Repo {
  sessionId: string;
  dir: string;
  gitdir: string;
  objects: ObjectStore;
  refs: RefStore;
}

// One Store per storage object (the git package's storeFor), so callers in this process share its in-process mutexes.
export { storeFor } from '@entity-git/git';

export function repoOf(store: Store, root: string, sessionId: string, lockTimeoutMs = 5000): Repo {
  assertId(sessionId, 'session id');
  if (typeof root !== 'string' || !root.startsWith('/')) {
    throw new EntityGitError('INVALID_OPTION', `root must be an absolute path: ${JSON.stringify(root)}`);
  }
  const dir = joinPath(root.replace(/\/+$/, '') || '/', sessionDirName(sessionId));
  const gitdir = joinPath(dir, '.git');
  return {
    sessionId,
    dir,
    gitdir,
    objects: new ObjectStore(store, gitdir),
    refs: new RefStore(store, gitdir, { lockTimeoutMs }),
  };
}

export async function repoExists(store: Store, repo: Repo): Promise<boolean> {
  return (await store.lstat(joinPath(repo.gitdir, 'HEAD'))) !== null;
}

// Locks: `.git/entity-git-remote.lock` serializes this module's pushes and fetches of one
// repository (they write remote-tracking refs); a fetch that moves local branches then takes the
// mirror's sync lock through `withRepoLock` (mirror/repo-files.ts), as every sync does. The remote
// lock is not fenced against versions before the flat layout the way the sync lock is: it is taken
// with the sync lock inside it, and the fence is one per repository, so fencing both would make
// the inner one wait for the outer; an old and a new push overlapping during an upgrade still move
// each remote-tracking ref under its own `<ref>.lock`.

/**
 * The file system isomorphic-git sees during push and fetch: reads pass through; writes are
 * allowed only for objects (packs), remote-tracking refs and `shallow`, each through a temp file
 * and a rename. Local branches, HEAD, the index and the reflogs are core's (RefStore, under the
 * session lock): a write there is refused, so isomorphic-git can never move them behind
 * `<ref>.lock`'s back.
 */
export function transportFs(store: Store, repo: Repo): PromiseFsClient & { promises: Required<StorageFs> } {
  const base = store.fs;
  const rel = (path: string) => (path.startsWith(`${repo.gitdir}/`) ? path.slice(repo.gitdir.length + 1) : null);
  const writable = (path: string) => {
    const r = rel(path);
    return (
      r !== null && !r.includes('..') && (r.startsWith('objects/') || r.startsWith(`refs/remotes/`) || r === 'shallow')
    );
  };
  const refuse = (op: string, path: string): never => {
    throw new EntityGitError(
      'STORAGE_ERROR',
      `[${store.name}] the git transport may not ${op} ${path}: only objects and remote-tracking refs are written outside core's ref locks`,
      { op, path },
    );
  };
  const promises: Required<StorageFs> = {
    readFile: (p, o) => base.readFile(p, o),
    stat: (p) => base.stat(p),
    lstat: (p) => base.lstat(p),
    readdir: (p) => base.readdir(p),
    readlink: (p) =>
      base.readlink ? base.readlink(p) : Promise.reject(Object.assign(new Error(`ENOENT: ${p}`), { code: 'ENOENT' })),
    async writeFile(p: string, data: Uint8Array | string) {
      if (!writable(p)) refuse('write', p);
      await store.writeAtomic(p, typeof data === 'string' ? utf8(data) : data);
    },
    async mkdir(p: string) {
      if (!writable(`${p}/x`)) refuse('create directory', p);
      await base.mkdir(p);
    },
    async unlink(p: string) {
      if (!writable(p)) refuse('delete', p);
      await base.unlink(p);
    },
    async rmdir(p: string) {
      refuse('remove directory', p);
    },
    async rename(a: string, b: string) {
      if (!writable(a) || !writable(b)) refuse('rename', b);
      await base.rename(a, b);
    },
    async symlink(_t: string, p: string) {
      refuse('symlink', p);
    },
  };
  return { promises };
}

/** Strip credentials from anything that ends up in a message. */
const clean = (s: string, url: string) => s.split(url).join(redactUrl(url));

const NETWORK = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** Any failure of isomorphic-git's transport as a typed error (STYLE.md §6). */
export function remoteError(
  err: unknown,
  op: 'push' | 'fetch' | 'list',
  url: string,
  sessionId: string,
): EntityGitError {
  if (err instanceof EntityGitError) return err;
  const e = err as { code?: string; name?: string; message?: string; data?: Record<string, unknown>; cause?: unknown };
  const safeUrl = redactUrl(url);
  const base = { op, url: safeUrl, sessionId };
  const make = (code: ErrorCode, message: string, data: Record<string, unknown>) =>
    new EntityGitError(
      code,
      `${op} of session ${JSON.stringify(sessionId)} (${safeUrl}): ${clean(message, url)}`,
      { ...base, ...data },
      { cause: err },
    );
  const message = e?.message ?? String(err);
  switch (e?.code) {
    case 'HttpError': {
      const status = Number(e.data?.statusCode ?? 0);
      if (status === 401 || status === 403)
        return make('REMOTE_AUTH', `the host refused the credentials (HTTP ${status})`, {
          statusCode: status,
          retryable: false,
        });
      if (status === 404)
        return make('REMOTE_NOT_FOUND', 'no such repository on the host (HTTP 404)', {
          statusCode: status,
          retryable: false,
        });
      const retryable = status >= 500 || status === 408 || status === 429;
      return make('REMOTE_ERROR', `HTTP ${status} ${String(e.data?.statusMessage ?? '')}`.trim(), {
        statusCode: status,
        retryable,
      });
    }
    case 'UserCanceledError':
      return make('REMOTE_AUTH', 'onAuth cancelled the request', { retryable: false });
    case 'PushRejectedError':
      return make('REMOTE_REJECTED', message, { reason: e.data?.reason, retryable: false });
    case 'GitPushError':
      return make('REMOTE_REJECTED', message, { result: e.data?.result, retryable: false });
    case 'SmartHttpError':
      return make('REMOTE_ERROR', `not a smart-HTTP git server: ${message}`, { retryable: false });
  }
  const sys = fsErrorCode(err) ?? fsErrorCode(e?.cause);
  if (sys !== undefined && NETWORK.has(sys))
    return make('REMOTE_ERROR', `cannot reach the host (${sys})`, { networkCode: sys, retryable: true });
  // fetch() in browsers and undici rejects with a bare TypeError when the host is unreachable.
  if (e?.name === 'TypeError' && /fetch|network/i.test(message))
    return make('REMOTE_ERROR', `cannot reach the host (${message})`, { retryable: true });
  return make('REMOTE_ERROR', message, { isoCode: e?.code, retryable: true });
}

export function isRetryable(err: EntityGitError): boolean {
  if (err.code.startsWith('REMOTE_')) return err.data.retryable === true;
  return err.code === 'LOCK_TIMEOUT' || err.code === 'REF_LOCKED' || err.code === 'STORAGE_ERROR';
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
function base64(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out +=
      B64[(n >> 18) & 63]! +
      B64[(n >> 12) & 63]! +
      (i + 1 < bytes.length ? B64[(n >> 6) & 63]! : '=') +
      (i + 2 < bytes.length ? B64[n & 63]! : '=');
  }
  return out;
}

export interface TransportArgs {
  http: HttpClient;
  url: string;
  headers: Record<string, string>;
  onAuth?: AuthCallback;
  onAuthFailure?: AuthFailureCallback;
  onAuthSuccess: AuthSuccessCallback;
  corsProxy?: string;
}

/**
 * The remote's callbacks for one operation, remembering the credentials that worked so the
 * operation's later requests send them at once instead of meeting a 401 each time.
 */
export class Connection {
  private auth: GitAuth | null = null;
  readonly safeUrl: string;
  private http: HttpClient;
  constructor(
    readonly remote: Remote,
    readonly url: string,
  ) {
    this.safeUrl = redactUrl(url);
    this.http = remote.http;
  }

  /**
   * isomorphic-git's fetch fails with "Could not find HEAD" when the host advertises no HEAD
   * (isomorphic-git issue #1654) — as a bare repository whose HEAD names a branch never pushed
   * (`git init --bare` gives `master`) does. Fetches through this connection see
   * `symref=HEAD:<target>` added to such an advertisement, as a host with that HEAD would send.
   */
  assumeHead(target: string): void {
    this.http = withHeadSymref(this.remote.http, target);
  }

  /** The transport arguments of one isomorphic-git call (a fresh headers object: it mutates it). */
  args(): TransportArgs {
    const headers: Record<string, string> = { ...this.remote.headers };
    if (this.auth?.headers) Object.assign(headers, this.auth.headers);
    if (this.auth?.username !== undefined || this.auth?.password !== undefined) {
      headers.Authorization = `Basic ${base64(utf8(`${this.auth.username ?? ''}:${this.auth.password ?? ''}`))}`;
    }
    const out: TransportArgs = {
      http: this.http,
      url: this.url,
      headers,
      onAuthSuccess: async (url: string, auth: GitAuth) => {
        this.auth = auth;
        await this.remote.onAuthSuccess?.(url, auth);
      },
    };
    if (this.remote.onAuth) out.onAuth = this.remote.onAuth;
    if (this.remote.onAuthFailure) out.onAuthFailure = this.remote.onAuthFailure;
    if (this.remote.corsProxy) out.corsProxy = this.remote.corsProxy;
    return out;
  }
}

/**
 * Make sure the repository's config names the remote (isomorphic-git's fetch maps refs through
 * `remote.<name>.fetch`, and a person can then `git fetch` by hand): the URL without
 * credentials, branches to `refs/remotes/<name>/*`, the HEAD record beside them. Written
 * through a temp file and a rename, and only when it differs.
 */
export async function ensureRemoteConfig(store: Store, repo: Repo, remote: Remote, url: string): Promise<void> {
  const path = joinPath(repo.gitdir, 'config');
  const text = (await store.readText(path)) ?? '';
  const n = remote.name;
  const section = `${[
    `[remote "${n}"]`,
    `\turl = ${redactUrl(url)}`,
    `\tfetch = +refs/heads/*:refs/remotes/${n}/*`,
    // isomorphic-git's push keeps its copy of any pushed ref at refs/remotes/<name>/<ref>;
    // fetching to the same place keeps one remote-tracking copy of the record.
    `\tfetch = +refs/entity-git/*:refs/remotes/${n}/refs/entity-git/*`,
  ].join('\n')}\n`;
  const lines = text.split('\n');
  const out: string[] = [];
  let skipping = false;
  for (const line of lines) {
    if (/^\s*\[/.test(line)) skipping = line.trim() === `[remote "${n}"]`;
    if (!skipping) out.push(line);
  }
  let rest = out.join('\n');
  if (rest !== '' && !rest.endsWith('\n')) rest += '\n';
  const next = rest + section;
  if (next !== text) await store.writeAtomic(path, next);
}

/** Create an empty repository exactly as the mirror's first sync does (HEAD last). */
export async function initRepo(store: Store, repo: Repo): Promise<void> {
  if (await repoExists(store, repo)) return;
  for (const d of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags'])
    await store.mkdirp(joinPath(repo.gitdir, d));
  const config = `[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n`;
  if ((await store.lstat(joinPath(repo.gitdir, 'config'))) === null)
    await store.writeAtomic(joinPath(repo.gitdir, 'config'), config);
  await store.writeAtomic(joinPath(repo.gitdir, 'description'), 'entity-git session repository\n');
  await store.writeAtomic(joinPath(repo.gitdir, 'HEAD'), 'ref: refs/heads/main\n');
}

const decoder = new TextDecoder();

async function collect(body: AsyncIterable<Uint8Array> | undefined): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  if (body) for await (const chunk of body) parts.push(chunk);
  return concatBytes(parts);
}

/** The v1 upload-pack advertisement `bytes` with `symref=HEAD:<target>` added when it has no HEAD. */
export function addHeadSymref(bytes: Uint8Array, target: string): Uint8Array {
  const pktLen = (at: number) => Number.parseInt(decoder.decode(bytes.subarray(at, at + 4)), 16);
  let at = 0;
  const first = pktLen(0);
  if (Number.isNaN(first)) return bytes;
  if (first > 4 && decoder.decode(bytes.subarray(4, 4 + Math.min(first - 4, 10))).startsWith('# service=')) {
    at = first;
    // the flush after the service line
    if (decoder.decode(bytes.subarray(at, at + 4)) === '0000') at += 4;
  }
  const len = pktLen(at);
  if (Number.isNaN(len) || len <= 4) return bytes;
  const line = decoder.decode(bytes.subarray(at + 4, at + len));
  const nul = line.indexOf('\0');
  if (nul < 0) return bytes;
  const name = line.slice(41, nul);
  const caps = line.slice(nul + 1).replace(/\n$/, '');
  if (name === 'HEAD' || /(^| )symref=HEAD:/.test(caps) || name === 'capabilities^{}') return bytes;
  const patched = utf8(`${line.slice(0, nul)}\0${caps} symref=HEAD:${target}\n`);
  const head = utf8((patched.length + 4).toString(16).padStart(4, '0'));
  const out = new Uint8Array(bytes.length - len + 4 + patched.length);
  out.set(bytes.subarray(0, at), 0);
  out.set(head, at);
  out.set(patched, at + 4);
  out.set(bytes.subarray(at + len), at + 4 + patched.length);
  return out;
}

function withHeadSymref(http: HttpClient, target: string): HttpClient {
  return {
    async request(req) {
      const res = await http.request(req);
      if (
        (req.method ?? 'GET') !== 'GET' ||
        !/\/info\/refs\?service=git-upload-pack$/.test(req.url) ||
        res.statusCode !== 200
      )
        return res;
      const bytes = addHeadSymref(await collect(res.body), target);
      return {
        ...res,
        body: (async function* () {
          yield bytes;
        })(),
      };
    },
  };
}
