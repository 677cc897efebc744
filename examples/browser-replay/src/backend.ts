// Where the app's actions run. Online: the ws-server, over one WebSocket. Offline: core's very
// same action handlers in the page, over the IndexedDB DAG and the browser mirror — so replay
// looks and behaves the same with the server gone.
import type { ActionResponse } from '@entity-git/core';
import { createActions } from '@entity-git/core';
import { DEFAULT_ROOT, createBrowserMirror, openIdbDag, type IdbDag } from '@entity-git/browser-fs';
import { OfflineSearch } from './offline-search.js';
import {
  TOKEN_PARAM,
  WS_PATH,
  type ServerActionMap,
  type ServerActionName,
  type ServerEvent,
} from 'ws-server/protocol';
import { REPO_AUTH_SCHEME, REPO_PATH } from 'ws-server/repo-bundle';

export class ActionError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface Backend {
  readonly mode: 'online' | 'offline';
  call<K extends ServerActionName>(
    action: K,
    params: ServerActionMap[K]['params'],
  ): Promise<ServerActionMap[K]['result']>;
  /** The server's unsolicited frames (`project_turn`); offline there are none. */
  onEvent?(listener: (event: ServerEvent) => void): void;
  /** A copy of a session's repository (`GET /repo/<session>`, a bundle); online only. */
  fetchRepo?(sessionId: string): Promise<Uint8Array>;
}

/** The browser's own copy: the DAG in IndexedDB, session repositories in LightningFS. */
export interface LocalStore {
  dag: IdbDag;
  mirror: ReturnType<typeof createBrowserMirror>;
  backend: Backend;
}

export const LOCAL_DB_NAME = 'entity-git-replay';
export const LOCAL_FS_NAME = 'entity-git-replay';

/** Rows per IndexedDB read of the saved copy (`nodesAfter`'s page). */
const READ_PAGE = 128;

let local: Promise<LocalStore> | null = null;

/** Opened once per page, on first use. */
export function localStore(): Promise<LocalStore> {
  local ??= (async () => {
    // Pages of 128 rows: a step reads its window of turns (21 turns, ~100 rows) in one page, not 500.
    const dag = await openIdbDag({ name: LOCAL_DB_NAME, batchSize: READ_PAGE });
    const mirror = createBrowserMirror({ dag, fsName: LOCAL_FS_NAME });
    const search = new OfflineSearch(mirror.storage, DEFAULT_ROOT);
    const actions = createActions({ dag, mirror, writer: dag, projects: dag, search });
    const backend: Backend = {
      mode: 'offline',
      async call(action, params) {
        const r = await actions.handle({ action, params });
        if (!r.ok)
          throw new ActionError(
            r.error.code === 'UNKNOWN_ACTION' ? 'OFFLINE' : r.error.code,
            r.error.code === 'UNKNOWN_ACTION' ? `${action} needs the server` : r.error.message,
          );
        return r.result as never;
      },
    };
    return { dag, mirror, backend };
  })();
  return local;
}

export type Connection =
  | { ok: true; backend: Backend; closed: Promise<void> }
  | { ok: false; reason: 'unreachable' | 'refused' };

const TIMEOUT_MS = 5000;

/**
 * Open the WebSocket. A browser cannot see why an upgrade failed, so a failure is followed by a
 * plain GET of /healthz: answered means the server is up and refused us (token or origin),
 * unanswered means it is gone.
 */
export async function connect(token: string | null): Promise<Connection> {
  const url = new URL(WS_PATH.slice(1), location.href.replace(/#.*$/, ''));
  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  url.search = '';
  url.hash = '';
  if (token !== null) url.searchParams.set(TOKEN_PARAM, token);
  const ws = new WebSocket(url);
  const opened = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), TIMEOUT_MS);
    ws.onopen = () => {
      clearTimeout(timer);
      resolve(true);
    };
    ws.onerror = () => {
      clearTimeout(timer);
      resolve(false);
    };
    ws.onclose = () => {
      clearTimeout(timer);
      resolve(false);
    };
  });
  if (!opened) {
    ws.close();
    const up = await fetch(new URL('healthz', location.href.replace(/#.*$/, '')), { cache: 'no-store' }).then(
      (r) => r.ok,
      () => false,
    );
    return { ok: false, reason: up ? 'refused' : 'unreachable' };
  }
  const pending = new Map<number, (r: ActionResponse) => void>();
  let next = 0;
  let gone = false;
  const closed = new Promise<void>((resolve) => {
    ws.onclose = () => {
      gone = true;
      for (const settle of pending.values())
        settle({ ok: false, error: { code: 'DISCONNECTED', message: 'the server connection closed' } });
      pending.clear();
      resolve();
    };
  });
  const listeners: Array<(event: ServerEvent) => void> = [];
  ws.onmessage = (event) => {
    const r = JSON.parse(String(event.data)) as ActionResponse | ServerEvent;
    if ('event' in r) {
      for (const l of listeners) l(r);
      return;
    }
    if (typeof r.id !== 'number') return;
    pending.get(r.id)?.(r);
    pending.delete(r.id);
  };
  const backend: Backend = {
    mode: 'online',
    onEvent: (listener) => {
      listeners.push(listener);
    },
    async fetchRepo(sessionId) {
      const url = new URL(`${REPO_PATH.slice(1)}${encodeURIComponent(sessionId)}`, location.href.replace(/#.*$/, ''));
      const r = await fetch(url, {
        cache: 'no-store',
        headers: token === null ? {} : { Authorization: `${REPO_AUTH_SCHEME} ${token}` },
      });
      if (!r.ok) {
        const body = (await r.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
        throw new ActionError(body?.error?.code ?? `HTTP_${r.status}`, body?.error?.message ?? r.statusText);
      }
      return new Uint8Array(await r.arrayBuffer());
    },
    async call(action, params) {
      if (gone) throw new ActionError('DISCONNECTED', 'the server connection closed');
      const id = ++next;
      const r = await new Promise<ActionResponse>((resolve) => {
        pending.set(id, resolve);
        ws.send(JSON.stringify({ id, action, params }));
      });
      if (!r.ok) throw new ActionError(r.error.code, r.error.message);
      return r.result as never;
    },
  };
  return { ok: true, backend, closed };
}
