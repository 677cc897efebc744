// One WebSocket's requests: at most `maxInFlight` run at once, each counted until its reply has
// left for the socket (its send callback), so a client that stops reading holds its own slots and
// no one else's. Past the limit a request is answered `BUSY` at once; while the replies waiting to
// go out pass `maxBuffered` bytes, frames are not even read (TCP pushes back on the client).
import type { ActionResponse } from '@entity-git/core';
import type { WebSocket } from 'ws';

/** Default requests one connection may have running (their replies not yet written out). */
export const DEFAULT_MAX_IN_FLIGHT = 8;
/** Default bytes of replies queued for one connection before its frames stop being read. */
export const DEFAULT_MAX_BUFFERED = 4 * 1024 * 1024;

export interface ConnectionOptions {
  maxInFlight: number;
  maxBuffered: number;
  /** Answers one parsed request. */
  handle: (request: unknown) => Promise<ActionResponse>;
}

const error = (code: string, message: string): ActionResponse =>
  ({ ok: false, error: { code, message: `[entity-git] ${message}` } }) as ActionResponse;

/** The `id` of a request, echoed on a `BUSY` answer the handler never saw. */
const idOf = (request: unknown): string | number | undefined => {
  const id = typeof request === 'object' && request !== null ? (request as { id?: unknown }).id : undefined;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
};

/** Serves the requests of `ws` under the limits; returns when it is set up. */
export function serveConnection(ws: WebSocket, options: ConnectionOptions): void {
  let inFlight = 0;
  const send = (response: ActionResponse): Promise<void> =>
    new Promise((done) => {
      if (ws.readyState !== ws.OPEN) return done();
      ws.send(JSON.stringify(response), () => {
        if (ws.isPaused && ws.bufferedAmount < options.maxBuffered / 2) ws.resume();
        done();
      });
      if (ws.bufferedAmount > options.maxBuffered && !ws.isPaused) ws.pause();
    });
  ws.on('error', () => ws.terminate());
  ws.on('message', (data, isBinary) => {
    if (isBinary) return void send(error('INVALID_ARGUMENT', 'requests are JSON text frames'));
    let request: unknown;
    try {
      request = JSON.parse(String(data));
    } catch {
      return void send(error('INVALID_ARGUMENT', 'a request must be JSON'));
    }
    if (inFlight >= options.maxInFlight) {
      const id = idOf(request);
      const busy = error('BUSY', `${inFlight} requests of this connection are running; retry after an answer`);
      return void send(id === undefined ? busy : { ...busy, id });
    }
    inFlight++;
    void options
      .handle(request)
      .then(send)
      .finally(() => inFlight--);
  });
}
