import type { AuthCallback, AuthFailureCallback, AuthSuccessCallback, GitAuth, HttpClient } from 'isomorphic-git';
import { concatBytes, utf8 } from '@entity-git/git';
import { addHeadSymref } from './pkt-line.js';
import { redactUrl, type Remote } from './remote.js';

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
   * — as a bare repository whose HEAD names a branch never pushed
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
      headers.Authorization = `Basic ${basicCredentials(this.auth.username ?? '', this.auth.password ?? '')}`;
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

async function collect(body: AsyncIterable<Uint8Array> | undefined): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  if (body) for await (const chunk of body) parts.push(chunk);
  return concatBytes(parts);
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

/**
 * `user:password` as the `Authorization: Basic` header carries it (RFC 7617): its UTF-8 bytes in
 * base64, through the platform's `btoa` (Node and browsers), which takes one char per byte.
 */
function basicCredentials(username: string, password: string): string {
  return btoa(String.fromCharCode(...utf8(`${username}:${password}`)));
}
