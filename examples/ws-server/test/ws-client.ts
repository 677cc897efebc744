// A small WebSocket client for the tests: typed calls matched by id, raw frames, and the HTTP
// status of a refused upgrade.
import type { ActionResponse } from '@entity-git/core';
import WebSocket from 'ws';
import type { ServerActionMap, ServerActionName } from '../src/protocol.js';

export interface Client {
  /** One request; the response envelope as the server sent it. */
  request(action: string, params?: unknown): Promise<ActionResponse>;
  /** One request; its result, or a thrown Error whose message starts with the error code. */
  call<K extends ServerActionName>(
    action: K,
    params: ServerActionMap[K]['params'],
  ): Promise<ServerActionMap[K]['result']>;
  /** Send a frame as is and wait for the next message. */
  raw(data: string | Buffer): Promise<unknown>;
  /** Wait for the next message that answers no request (a pushed `ServerEvent`). */
  next(): Promise<unknown>;
  closed: Promise<{ code: number; reason: string }>;
  close(): Promise<void>;
}

export type Opened = { ok: true; client: Client } | { ok: false; status: number };

/** Open `url` with an optional Origin header; a refused upgrade resolves with its HTTP status. */
export function open(url: string, options: { origin?: string } = {}): Promise<Opened> {
  const ws = new WebSocket(url, options.origin === undefined ? {} : { origin: options.origin });
  const pending = new Map<string | number, (r: ActionResponse) => void>();
  const rawWaiters: Array<(m: unknown) => void> = [];
  let next = 0;
  ws.on('message', (data) => {
    const msg = JSON.parse(String(data)) as ActionResponse;
    const waiter = msg.id !== undefined ? pending.get(msg.id) : undefined;
    if (waiter && msg.id !== undefined) {
      pending.delete(msg.id);
      waiter(msg);
    } else rawWaiters.shift()?.(msg);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
  );
  const client: Client = {
    request: (action, params) =>
      new Promise((resolve) => {
        const id = `r${++next}`;
        pending.set(id, resolve);
        ws.send(JSON.stringify({ id, action, params }));
      }),
    async call(action, params) {
      const r = await client.request(action, params);
      if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
      return r.result as never;
    },
    raw: (data) =>
      new Promise((resolve) => {
        rawWaiters.push(resolve);
        ws.send(data);
      }),
    next: () =>
      new Promise((resolve) => {
        rawWaiters.push(resolve);
      }),
    closed,
    async close() {
      ws.close();
      await closed;
    },
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ok: true, client }));
    ws.once('unexpected-response', (_req, res) => {
      resolve({ ok: false, status: res.statusCode ?? 0 });
      ws.terminate();
    });
    ws.once('error', (err) => reject(err));
  });
}

export async function connect(url: string, options: { origin?: string } = {}): Promise<Client> {
  const o = await open(url, options);
  if (!o.ok) throw new Error(`upgrade refused with HTTP ${o.status}`);
  return o.client;
}
