import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A real smart-HTTP git server for tests: native `git http-backend` (CGI) behind a small node:http
 * server on 127.0.0.1. Bare repositories live under `root`, one per session
 * (`<root>/sessions/<idSegment>.git`). CORS headers are sent so a browser page on another origin
 * can fetch from it.
 */
export interface GitHttpServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  readonly port: number;
  /** The directory holding the bare repositories (GIT_PROJECT_ROOT). */
  readonly root: string;
  /** A URL template for `defineRemote`: `<origin>/sessions/{session}.git`. */
  readonly template: string;
  /** Requests served so far (a refused or failed one included). */
  readonly requests: number;
  /** `git init --bare` a repository at `<root>/<path>` (e.g. `sessions/golden-1.git`) accepting pushes. */
  createRepo(path: string): string;
  /** Answer the next `n` requests with 503 (a flaky host). */
  failNext(n: number): void;
  /** Change the token the server expects (null: no auth). */
  setToken(token: string | null): void;
  /** Stop listening (in-flight requests finish). */
  close(): Promise<void>;
}

export interface GitHttpServerOptions {
  /** Require `Authorization: Basic <any user>:<token>` (or `Bearer <token>`). Default: no auth. */
  token?: string | null;
  /** Create a missing bare repository on the first request for it. Default false. */
  autoCreate?: boolean;
  /** Default: a fresh temp directory. */
  root?: string;
  /** Default: any free port. */
  port?: number;
}

const BACKEND = '/usr/lib/git-core/git-http-backend';

function gitEnv(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', HOME: tmpdir() };
}

export async function startGitHttpServer(options: GitHttpServerOptions = {}): Promise<GitHttpServer> {
  const root = options.root ?? mkdtempSync(join(tmpdir(), 'eg-git-server-'));
  let token = options.token ?? null;
  let failures = 0;
  let requests = 0;

  const createRepo = (path: string): string => {
    const dir = join(root, path);
    if (existsSync(join(dir, 'HEAD'))) return dir;
    mkdirSync(dir, { recursive: true });
    execFileSync('git', ['init', '--bare', '--quiet', dir], { env: gitEnv() });
    execFileSync('git', ['config', 'http.receivepack', 'true'], { cwd: dir, env: gitEnv() });
    return dir;
  };

  const authorized = (req: IncomingMessage): boolean => {
    if (token === null) return true;
    const header = req.headers.authorization ?? '';
    if (header === `Bearer ${token}`) return true;
    if (!header.startsWith('Basic ')) return false;
    const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
    return decoded.slice(decoded.indexOf(':') + 1) === token;
  };

  const cors = (res: ServerResponse) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
    res.setHeader(
      'Access-Control-Allow-Headers',
      'Authorization, Content-Type, Git-Protocol, User-Agent, X-Authorization',
    );
    res.setHeader('Access-Control-Expose-Headers', 'Content-Type, WWW-Authenticate');
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    requests++;
    cors(res);
    if (req.method === 'OPTIONS') {
      res.writeHead(204).end();
      return;
    }
    if (failures > 0) {
      failures--;
      req.resume();
      res.writeHead(503, { 'Content-Type': 'text/plain' }).end('try again later\n');
      return;
    }
    if (!authorized(req)) {
      req.resume();
      res
        .writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"', 'Content-Type': 'text/plain' })
        .end('unauthorized\n');
      return;
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const pathInfo = decodeURIComponent(url.pathname);
    if (pathInfo.includes('..')) {
      res.writeHead(400).end();
      return;
    }
    const repo = /^(.*?\.git)\//.exec(pathInfo)?.[1];
    if (options.autoCreate && repo) createRepo(repo.slice(1));
    const env: NodeJS.ProcessEnv = {
      ...gitEnv(),
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: '1',
      REQUEST_METHOD: req.method ?? 'GET',
      PATH_INFO: pathInfo,
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      REMOTE_USER: 'tester',
      REMOTE_ADDR: '127.0.0.1',
      SERVER_PROTOCOL: 'HTTP/1.1',
    };
    if (req.headers['content-length'] !== undefined) env.CONTENT_LENGTH = req.headers['content-length'];
    if (req.headers['content-encoding'] !== undefined)
      env.HTTP_CONTENT_ENCODING = String(req.headers['content-encoding']);
    if (req.headers['git-protocol'] !== undefined) env.GIT_PROTOCOL = String(req.headers['git-protocol']);
    const child = spawn(BACKEND, [], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    req.pipe(child.stdin);
    child.stdin.on('error', () => undefined);
    let head = Buffer.alloc(0);
    let headerDone = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (headerDone) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      let end = head.indexOf('\r\n\r\n');
      let sep = 4;
      if (end < 0) {
        end = head.indexOf('\n\n');
        sep = 2;
      }
      if (end < 0) return;
      headerDone = true;
      let status = 200;
      for (const line of head.subarray(0, end).toString('latin1').split(/\r?\n/)) {
        const i = line.indexOf(':');
        if (i < 0) continue;
        const name = line.slice(0, i).trim();
        const value = line.slice(i + 1).trim();
        if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
        else res.setHeader(name, value);
      }
      res.writeHead(status);
      res.write(head.subarray(end + sep));
    });
    child.stderr.resume();
    child.on('close', () => {
      if (!headerDone) res.writeHead(502).end();
      else res.end();
    });
    child.on('error', () => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  };

  const server: Server = createServer(handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    port,
    root,
    template: `${origin}/sessions/{session}.git`,
    get requests() {
      return requests;
    },
    createRepo,
    failNext: (n) => {
      failures = n;
    },
    setToken: (t) => {
      token = t;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
