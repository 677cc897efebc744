import type { AuthCallback, AuthFailureCallback, AuthSuccessCallback, GitAuth, HttpClient } from 'isomorphic-git';
import { EntityGitError } from '@entity-git/git';
import { assertId, idSegment } from '@entity-git/core';

export type { AuthCallback, AuthFailureCallback, AuthSuccessCallback, GitAuth, HttpClient };

/**
 * Where session repositories are pushed to and fetched from: one repository per session on any
 * git host that speaks smart HTTP. This package imports no transport: the caller passes isomorphic-git's
 * HTTP client (`isomorphic-git/http/node` on Node, `isomorphic-git/http/web` in the browser).
 */
export interface RemoteOptions {
  /**
   * The URL of a session's repository.
   * - A string is a template for a remote per root: `{session}` is replaced by the session's
   *   directory name (`idSegment`, the same name as under the local root), URL-escaped — e.g.
   *   `https://git.example.com/sessions/{session}.git`. It must contain `{session}`.
   * - A function gives each session its own URL (a remote per session).
   * Credentials belong in `onAuth`, not in the URL (a URL's user:password would be written into
   * each repository's config).
   */
  url: string | ((sessionId: string) => string);
  /** isomorphic-git's HTTP client. */
  http: HttpClient;
  /** Asked for credentials when the host answers 401 (isomorphic-git's `onAuth`). Default: none. */
  onAuth?: AuthCallback;
  /** Asked when the credentials `onAuth` gave were refused; return new ones or nothing to give up. */
  onAuthFailure?: AuthFailureCallback;
  /** Told which credentials worked. */
  onAuthSuccess?: AuthSuccessCallback;
  /** Extra HTTP headers on every request (e.g. a static `Authorization`). Default: none. */
  headers?: Record<string, string>;
  /** A CORS proxy for browsers talking to hosts that send no CORS headers. Default: none. */
  corsProxy?: string;
  /**
   * The remote's name in each repository: its `[remote "<name>"]` config section and the
   * remote-tracking refs `refs/remotes/<name>/*`. Default `origin`.
   */
  name?: string;
}

/** A validated, frozen {@link RemoteOptions}: what push, fetch, restore and the scheduler take. */
export interface Remote {
  readonly name: string;
  readonly http: HttpClient;
  readonly onAuth?: AuthCallback;
  readonly onAuthFailure?: AuthFailureCallback;
  readonly onAuthSuccess?: AuthSuccessCallback;
  readonly headers: Readonly<Record<string, string>>;
  readonly corsProxy?: string;
  /** The URL of `sessionId`'s repository. */
  urlFor(sessionId: string): string;
}

const REMOTE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** Validate remote options once, at the edge, and freeze them. */
export function defineRemote(options: RemoteOptions | Remote): Remote {
  if (isRemote(options)) return options;
  const { url, http } = options;
  if (http === null || typeof http !== 'object' || typeof http.request !== 'function') {
    throw new EntityGitError(
      'INVALID_OPTION',
      'remote.http must be an isomorphic-git HTTP client (isomorphic-git/http/node or /http/web)',
    );
  }
  const name = options.name ?? 'origin';
  if (!REMOTE_NAME.test(name))
    throw new EntityGitError('INVALID_OPTION', `remote.name must match ${REMOTE_NAME}: ${JSON.stringify(name)}`);
  let urlFor: (sessionId: string) => string;
  if (typeof url === 'string') {
    if (!url.includes('{session}')) {
      throw new EntityGitError(
        'INVALID_OPTION',
        `remote.url must contain {session} (one repository per session): ${JSON.stringify(url)}`,
      );
    }
    assertHttpUrl(url.replaceAll('{session}', 'x'));
    urlFor = (sessionId) => {
      assertId(sessionId, 'session id');
      return url.replaceAll('{session}', encodeURIComponent(idSegment(sessionId)));
    };
  } else if (typeof url === 'function') {
    urlFor = (sessionId) => {
      assertId(sessionId, 'session id');
      const u = url(sessionId);
      assertHttpUrl(u);
      return u;
    };
  } else {
    throw new EntityGitError(
      'INVALID_OPTION',
      'remote.url must be a URL template with {session} or a function of the session id',
    );
  }
  const remote: Remote & { [BRAND]: true } = {
    [BRAND]: true,
    name,
    http,
    headers: Object.freeze({ ...(options.headers ?? {}) }),
    urlFor,
    ...(options.onAuth ? { onAuth: options.onAuth } : {}),
    ...(options.onAuthFailure ? { onAuthFailure: options.onAuthFailure } : {}),
    ...(options.onAuthSuccess ? { onAuthSuccess: options.onAuthSuccess } : {}),
    ...(options.corsProxy ? { corsProxy: options.corsProxy } : {}),
  };
  return Object.freeze(remote);
}

const BRAND = Symbol('entity-git.remote');
const isRemote = (o: unknown): o is Remote => typeof o === 'object' && o !== null && BRAND in o;

function assertHttpUrl(url: unknown): asserts url is string {
  if (typeof url !== 'string' || !/^https?:\/\/[^/\s]+/i.test(url)) {
    throw new EntityGitError('INVALID_OPTION', `a remote URL must be http(s)://…: ${JSON.stringify(url)}`);
  }
}

/** A URL without `user:password@`, for messages and config files. */
export function redactUrl(url: string): string {
  return url.replace(/^(https?:\/\/)[^@/]*@/i, '$1');
}
