// `GET /repo/<session>`: a copy of the session's repository (its .git directory: HEAD, config,
// refs, packs, commit-graph; not the index, reflogs, locks or the mirror's state) as one bundle
// (repo-bundle.ts), for the browser's "Save for offline" to write into its own storage instead
// of committing every turn again. The token is required (`Authorization: Bearer …`), an Origin
// must be allowed, the session must be in the DAG and its directory inside the root. Refusals
// are JSON `{ ok: false, error: { code, message } }`: 401 UNAUTHORIZED, 403 FORBIDDEN,
// 400 INVALID_ID, 404 SESSION_NOT_FOUND, 405 METHOD_NOT_ALLOWED.
import { isEntityGitError, type DagSource, type Mirror } from '@entity-git/core';
import { readdir, readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join, resolve, sep } from 'node:path';
import { encodeRepoBundle, REPO_AUTH_SCHEME, REPO_BUNDLE_TYPE, REPO_PATH, type RepoFile } from './repo-bundle.js';
import { SECURITY_HEADERS } from './static-files.js';

export interface RepoRouteOptions {
  dag: DagSource;
  mirror: Mirror;
  /** The mirror's root directory (the session directories are under it). */
  root: string;
  /** Whether the token is right, after the server's delay for wrong ones; `'busy'` when too many attempts wait. */
  checkToken: (given: string | null) => Promise<boolean | 'busy'>;
  origins: () => readonly string[];
}

/**
 * Files a copy leaves out: the work tree's index (and its shared part), reflogs, locks, and the
 * mirror's state log (a cache the browser's mirror rebuilds from its rows when it needs one, and
 * a large part of a long session's bytes).
 */
const skipped = (path: string) =>
  path === 'index' ||
  path.startsWith('sharedindex.') ||
  path.startsWith('logs/') ||
  path.startsWith('entity-git/') ||
  path.endsWith('.lock');
/** Refs before objects: objects are written before the refs that name them, so a copy never names one it lacks. */
const rank = (path: string) => (path.startsWith('objects/') ? 1 : 0);
const ATTEMPTS = 3;

function refuse(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
) {
  const body = JSON.stringify({ ok: false, error: { code, message } });
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-store',
    ...SECURITY_HEADERS,
    ...headers,
  });
  res.end(body);
}

async function filesOf(gitdir: string): Promise<RepoFile[]> {
  const paths = (await readdir(gitdir, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) =>
      join(e.parentPath, e.name)
        .slice(gitdir.length + 1)
        .split(sep)
        .join('/'),
    )
    .filter((p) => !skipped(p))
    .sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
  const out: RepoFile[] = [];
  for (const path of paths) out.push({ path, data: await readFile(join(gitdir, ...path.split('/'))) });
  return out;
}

/** The route's handler; answers every request whose path starts with {@link REPO_PATH}. */
export function repoRoute(o: RepoRouteOptions): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const root = resolve(o.root);
  return async (req, res) => {
    const origin = req.headers.origin;
    if (origin !== undefined && !o.origins().includes(origin))
      return refuse(res, 403, 'FORBIDDEN', 'this origin may not read repositories');
    const auth = req.headers.authorization ?? '';
    const given = auth.startsWith(`${REPO_AUTH_SCHEME} `) ? auth.slice(REPO_AUTH_SCHEME.length + 1) : null;
    const checked = await o.checkToken(given);
    if (checked === 'busy') return refuse(res, 429, 'BUSY', 'too many token attempts are waiting');
    if (!checked) return refuse(res, 401, 'UNAUTHORIZED', 'a missing or wrong token');
    if (req.method !== 'GET') return refuse(res, 405, 'METHOD_NOT_ALLOWED', 'GET only', { Allow: 'GET' });
    const raw = (req.url ?? '').split('?')[0]!.slice(REPO_PATH.length);
    let sessionId: string;
    try {
      sessionId = decodeURIComponent(raw);
    } catch {
      return refuse(res, 400, 'INVALID_ID', 'the session id is not URI-encoded');
    }
    // One path segment, URI-encoded: a raw `/` or `..` segment is never a session id here.
    if (raw === '' || raw.includes('/') || sessionId.includes('\0'))
      return refuse(res, 400, 'INVALID_ID', `not a session id: ${JSON.stringify(sessionId)}`);
    if ((await o.dag.getSession(sessionId).catch(() => null)) === null)
      return refuse(res, 404, 'SESSION_NOT_FOUND', `no session ${JSON.stringify(sessionId)}`);
    let dir: string;
    try {
      dir = resolve(o.mirror.repoPath(sessionId));
    } catch (err) {
      if (isEntityGitError(err)) return refuse(res, 400, err.code, err.message);
      throw err;
    }
    if (!dir.startsWith(root + sep))
      return refuse(res, 400, 'INVALID_ID', `not a session id: ${JSON.stringify(sessionId)}`);
    let files: RepoFile[] | null = null;
    // A pack removed by a repack while being listed: list again.
    for (let k = 0; files === null; k++) {
      try {
        files = await filesOf(join(dir, '.git'));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || k + 1 >= ATTEMPTS) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT')
            return refuse(res, 404, 'SESSION_NOT_FOUND', `session ${JSON.stringify(sessionId)} has no repository`);
          throw err;
        }
      }
    }
    if (!files.some((f) => f.path === 'HEAD'))
      return refuse(res, 404, 'SESSION_NOT_FOUND', `session ${JSON.stringify(sessionId)} has no repository`);
    const body = encodeRepoBundle(files);
    res.writeHead(200, {
      'Content-Type': REPO_BUNDLE_TYPE,
      'Content-Length': String(body.length),
      'Cache-Control': 'no-store',
      ...SECURITY_HEADERS,
    });
    res.end(body);
  };
}
