// One HTTP server on 127.0.0.1: the built web app as static files, `GET /healthz`, a copy of a
// session's repository for "Save for offline" (`GET /repo/<session>`, token-checked), and the
// actions over a WebSocket at /ws. The upgrade is refused (403, 401) before any WebSocket exists
// unless the Origin is allowed and the token is right; messages are JSON ActionRequest →
// ActionResponse, answered in any order (match them by `id`). Unsolicited frames carry `event`
// instead of `id` (protocol.ts `ServerEvent`): the outcome of each project auto-commit.
import { createNodeMirror, nodeWorkdirPolicy } from '@entity-git/node-fs';
import { createNodeProjectGit, ShadowProjectGit } from '@entity-git/project/node';
import { openServerSearch } from './server-search.js';
import { openSqlite, type SqlStore } from '@entity-git/sqlite';
import { reconcile, type Mirror, type ProjectGit, type ReconcileReport, type TurnFilesSource } from '@entity-git/core';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer } from 'ws';
import { DEFAULT_MAX_BUFFERED, DEFAULT_MAX_IN_FLIGHT, serveConnection } from './connection.js';
import {
  AttemptGate,
  DEFAULT_FAILED_ATTEMPT_DELAY_MS,
  defaultAllowedHosts,
  hostAllowed,
  MIN_TOKEN_BITS,
  tokenBits,
  tokenMatches,
} from './gate.js';
import { TOKEN_PARAM, WS_PATH, type ServerEvent } from './protocol.js';
import type { Agent } from './agent.js';
import { createServerActions, type ServerActions } from './server-actions.js';
import { sendText, staticFiles } from './static-files.js';
import { REPO_PATH } from './repo-bundle.js';
import { repoRoute } from './repo-route.js';

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8787;
/** Largest request frame accepted (bytes); a bigger one closes the socket with 1009. */
export const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

export interface ServerOptions {
  /** A SQLite file (opened here, closed by `close()`), or a store the caller owns (left open). */
  db: string | SqlStore;
  /** The session repositories' root directory. */
  root: string;
  /** Default {@link DEFAULT_PORT}; 0 picks a free port (read it from `server.port`). */
  port?: number;
  /** Default {@link DEFAULT_HOST}. Anything else exposes the DAG beyond this machine: think first. */
  host?: string;
  /**
   * The shared secret a client sends on the upgrade (`/ws?token=…`). Default: 32 random bytes, hex.
   * A given one must carry at least {@link MIN_TOKEN_BITS} bits (`gate.ts` `tokenBits`): 32 hex
   * digits, 22 base64url characters.
   */
  token?: string;
  /**
   * The `Host` header values served (lower case, with the port). Default: `127.0.0.1:<port>`,
   * `localhost:<port>`, `[::1]:<port>` and `<host>:<port>`. Any other gets 421 before anything is read.
   */
  allowedHosts?: string[];
  /** Wait added after each wrong token before the next check (ms). Default {@link DEFAULT_FAILED_ATTEMPT_DELAY_MS}. */
  failedAttemptDelayMs?: number;
  /** Requests one socket may have running; past it the answer is `BUSY`. Default {@link DEFAULT_MAX_IN_FLIGHT}. */
  maxInFlight?: number;
  /** Reply bytes queued for one socket before its frames stop being read. Default {@link DEFAULT_MAX_BUFFERED}. */
  maxBuffered?: number;
  /**
   * The Origins a browser may connect from. Default: the server's own, as
   * `http://127.0.0.1:<port>` and `http://localhost:<port>`. A request without an Origin header
   * (not a browser) is let through to the token check.
   */
  origins?: string[];
  /** The built web app; null (the default) serves no pages. */
  staticDir?: string | null;
  /** Replies to `send_message`; none by default. */
  agent?: Agent | null;
  /**
   * The project git run around each `send_message` turn of a session bound to a project.
   * Default: `ShadowProjectGit` (the library's default mode, shadow: each turn snapshotted in a
   * private repository under `<root>/.shadow`, nothing written into the project), whose
   * auto-commit, for a project switched to `auto-commit` mode, is `createNodeProjectGit()`
   * (native git, the lock and journal files in `projectLocks`); null turns it off.
   */
  projectGit?: ProjectGit | null;
  /**
   * Answers `list_turn_files`, `turn_file_diff` and `restore_turn_files` (a project's shadow
   * snapshots). Default: `projectGit` when it answers them (a `ShadowProjectGit`), else none (the
   * actions are refused).
   */
  turnFiles?: TurnFilesSource | null;
  /** Where the default project git keeps its lock and journal files. Default: `defaultStateDir()` (`$XDG_RUNTIME_DIR` or `~/.cache`, private). */
  projectLocks?: string;
  /** Directories a project's workdir must be in (or be); default: anywhere `nodeWorkdirPolicy` allows. */
  workdirRoots?: string[];
  /** Bring every session's repository up to date with the DAG before listening. Default true. */
  reconcile?: boolean;
  /** Default {@link DEFAULT_MAX_PAYLOAD}. */
  maxPayload?: number;
  /** The clock for nodes the server writes (seconds since the epoch). */
  now?: () => number;
  /** Turns read ahead for replay's steps, served from memory (see server-actions). Default `DEFAULT_READ_AHEAD` (8); 0 turns it off. */
  readAhead?: number;
  /** Where the server reports (listening, refused upgrades, failed syncs). Default: nothing. */
  log?: (line: string) => void;
}

export interface EntityGitServer {
  /** `http://<host>:<port>` — the web app. */
  readonly url: string;
  /** `ws://<host>:<port>/ws` — without the token. */
  readonly wsUrl: string;
  readonly host: string;
  readonly port: number;
  readonly token: string;
  readonly origins: readonly string[];
  readonly store: SqlStore;
  readonly mirror: Mirror;
  /** The actions as the sockets run them (in-process, same validation and errors). */
  readonly actions: ServerActions;
  /** What start-up reconcile did (null when turned off). */
  readonly reconciled: ReconcileReport | null;
  /** Open sockets now. */
  connections(): number;
  /** Close every socket, stop listening, and close the store when the server opened it. Idempotent. */
  close(): Promise<void>;
}

function refuse(socket: Socket, status: number, reason: string): void {
  const body = `${reason}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** The project git itself when it answers the turn-file calls (shadow mode's `ShadowProjectGit` does). */
function turnFilesOf(projectGit: ProjectGit | null): TurnFilesSource | null {
  return projectGit !== null && answersTurnFiles(projectGit) ? projectGit : null;
}

function answersTurnFiles(git: ProjectGit): git is ProjectGit & TurnFilesSource {
  const calls: (keyof TurnFilesSource)[] = ['listTurnFiles', 'turnFileDiff', 'restoreTurnFiles', 'undoRestore'];
  return calls.every((name) => typeof Reflect.get(git, name) === 'function');
}

export async function createServer(options: ServerOptions): Promise<EntityGitServer> {
  const host = options.host ?? DEFAULT_HOST;
  const token = options.token ?? randomBytes(32).toString('hex');
  if (typeof token !== 'string' || tokenBits(token) < MIN_TOKEN_BITS)
    throw new TypeError(
      `[ws-server] token must carry at least ${MIN_TOKEN_BITS} bits: 32 hex digits or 22 base64url characters`,
    );
  const gate = new AttemptGate(options.failedAttemptDelayMs ?? DEFAULT_FAILED_ATTEMPT_DELAY_MS);
  let allowedHosts: string[] = (options.allowedHosts ?? []).map((h) => h.toLowerCase());
  const log = options.log ?? (() => undefined);
  const ownsStore = typeof options.db === 'string';
  const store = typeof options.db === 'string' ? await openSqlite({ file: options.db }) : options.db;
  const mirror = createNodeMirror({ dag: store.dag, root: options.root });
  const search = openServerSearch(options.root, log);
  const projectGit =
    options.projectGit === undefined
      ? new ShadowProjectGit({
          root: join(options.root, '.shadow'),
          autoCommit: createNodeProjectGit(options.projectLocks === undefined ? {} : { dir: options.projectLocks }),
        })
      : options.projectGit;
  const actions = createServerActions({
    dag: store.dag,
    writer: store.writer,
    projects: store.projects,
    mirror,
    agent: options.agent ?? null,
    now: options.now,
    projectGit,
    turnFiles: options.turnFiles === undefined ? turnFilesOf(projectGit) : options.turnFiles,
    ...(options.workdirRoots === undefined
      ? {}
      : { workdirPolicy: nodeWorkdirPolicy({ allowedRoots: options.workdirRoots }) }),
    ...(options.readAhead === undefined ? {} : { readAhead: options.readAhead }),
    onSyncError: (sessionId, err) => log(`sync of ${sessionId} failed after a write: ${(err as Error).message}`),
    onSynced: search.onSynced,
    search: search.index,
    onProjectTurn: (sessionId, result) => {
      if (result.status === 'failed')
        log(`project auto-commit of ${sessionId} failed: ${result.code}: ${result.message}`);
      else if (result.status === 'skipped' && result.warning !== null)
        log(`project auto-commit of ${sessionId} skipped (${result.reason}): ${result.warning}`);
      broadcast({ event: 'project_turn', session_id: sessionId, result });
    },
  });

  let reconciled: ReconcileReport | null = null;
  try {
    if (options.reconcile ?? true) reconciled = await reconcile({ dag: store.dag, mirror });
    await search.catchUp(store.dag);
    search.follow(actions.service);
  } catch (err) {
    await search.close();
    if (ownsStore) await store.close();
    throw err;
  }

  const serveFile = staticFiles(options.staticDir ?? null);
  const serveRepo = repoRoute({
    dag: store.dag,
    mirror,
    root: options.root,
    checkToken: (given) => gate.attempt(() => tokenMatches(given, token)),
    origins: () => origins,
  });
  const http: Server = createHttpServer((req, res) => {
    if (!hostAllowed(req.headers.host, allowedHosts)) {
      log(`refused a request for host ${JSON.stringify(req.headers.host ?? null)}`);
      return sendText(res, 421, 'this server does not answer to that Host');
    }
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz')
      return sendText(res, 200, JSON.stringify({ ok: true, name: 'entity-git ws-server' }), {
        'Content-Type': 'application/json',
      });
    if (path === WS_PATH) return sendText(res, 426, 'this path takes a WebSocket upgrade', { Upgrade: 'websocket' });
    if (path?.startsWith(REPO_PATH))
      return void serveRepo(req, res).catch((err: unknown) => {
        if (!res.headersSent) sendText(res, 500, 'internal error');
        else res.destroy();
        log(`repository copy error: ${(err as Error).message}`);
      });
    void serveFile(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendText(res, 500, 'internal error');
      else res.destroy();
      log(`static file error: ${(err as Error).message}`);
    });
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxPayload ?? DEFAULT_MAX_PAYLOAD });
  let origins: string[] = options.origins ?? [];
  // Called only once the server runs, by the project auto-commit of a sent message.
  const broadcast = (event: ServerEvent): void => {
    const frame = JSON.stringify(event);
    for (const ws of wss.clients) if (ws.readyState === ws.OPEN) ws.send(frame);
  };

  http.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    if (!hostAllowed(req.headers.host, allowedHosts)) {
      log(`refused a WebSocket for host ${JSON.stringify(req.headers.host ?? null)}`);
      return refuse(socket, 421, 'Misdirected Request');
    }
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://x');
    } catch {
      return refuse(socket, 400, 'Bad Request');
    }
    if (url.pathname !== WS_PATH) return refuse(socket, 404, 'Not Found');
    const origin = req.headers.origin;
    if (origin !== undefined && !origins.includes(origin)) {
      log(`refused a WebSocket from origin ${origin}`);
      return refuse(socket, 403, 'Forbidden');
    }
    const given = url.searchParams.get(TOKEN_PARAM);
    void gate
      .attempt(() => tokenMatches(given, token))
      .then((ok) => {
        if (ok === 'busy') return refuse(socket, 429, 'Too Many Requests');
        if (!ok) {
          log('refused a WebSocket with a missing or wrong token');
          return refuse(socket, 401, 'Unauthorized');
        }
        if (socket.destroyed) return;
        wss.handleUpgrade(req, socket, head, (ws) =>
          serveConnection(ws, {
            maxInFlight: options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT,
            maxBuffered: options.maxBuffered ?? DEFAULT_MAX_BUFFERED,
            handle: (request) => actions.handle(request as never),
          }),
        );
      });
  });

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? DEFAULT_PORT, host, () => {
      http.off('error', reject);
      resolve();
    });
  }).catch(async (err: unknown) => {
    await search.close();
    if (ownsStore) await store.close();
    throw err;
  });

  const port = (http.address() as AddressInfo).port;
  const hostInUrl = host.includes(':') ? `[${host}]` : host;
  if (options.origins === undefined)
    origins = [`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://${hostInUrl}:${port}`].filter(
      (o, i, all) => all.indexOf(o) === i,
    );
  if (options.allowedHosts === undefined) allowedHosts = defaultAllowedHosts(host, port);
  log(`listening on http://${hostInUrl}:${port} (WebSocket at ${WS_PATH})`);

  let closing: Promise<void> | null = null;
  return Object.freeze({
    url: `http://${hostInUrl}:${port}`,
    wsUrl: `ws://${hostInUrl}:${port}${WS_PATH}`,
    host,
    port,
    token,
    origins: Object.freeze([...origins]),
    store,
    mirror,
    actions,
    reconciled,
    connections: () => wss.clients.size,
    close: () =>
      (closing ??= (async () => {
        await actions.service.close();
        await search.close();
        for (const ws of wss.clients) ws.terminate();
        await new Promise<void>((resolve) => wss.close(() => resolve()));
        await new Promise<void>((resolve) => {
          http.close(() => resolve());
          http.closeAllConnections();
        });
        if (ownsStore) await store.close();
      })()),
  });
}
