// Serves the built web app: GET and HEAD only, paths resolved inside the directory (no `..`,
// no symlink out of it), `index.html` for `/`. Hashed assets are cached for good; the page and
// the service worker are revalidated on every load so an update is seen at once.
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
};

/**
 * The page may talk to its own origin only (the WebSocket included); no framing, no referrer.
 * `'wasm-unsafe-eval'` is not needed: the app runs no WebAssembly.
 */
export const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

export function sendText(
  res: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Cache-Control': 'no-store',
    ...SECURITY_HEADERS,
    ...headers,
  });
  res.end(text);
}

/** A request handler for the files under `dir`; null when `dir` is null (no app to serve). */
export function staticFiles(dir: string | null): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const rootPromise = dir === null ? null : realpath(resolve(dir)).catch(() => null);
  return async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return sendText(res, 405, 'method not allowed', { Allow: 'GET, HEAD' });
    const root = await rootPromise;
    if (root === null || root === undefined)
      return sendText(res, 404, 'this server has no web app to serve (start it with --static <dir>)');
    let pathname: string;
    try {
      pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    } catch {
      return sendText(res, 400, 'bad path');
    }
    if (pathname.includes('\0')) return sendText(res, 400, 'bad path');
    if (pathname.endsWith('/')) pathname += 'index.html';
    const wanted = resolve(join(root, pathname));
    let file: string;
    try {
      file = await realpath(wanted);
    } catch {
      return sendText(res, 404, 'not found');
    }
    if (file !== root && !file.startsWith(root + sep)) return sendText(res, 404, 'not found');
    const info = await stat(file).catch(() => null);
    if (!info?.isFile()) return sendText(res, 404, 'not found');
    const ext = extname(file).toLowerCase();
    const hashed = file.includes(`${sep}assets${sep}`);
    res.writeHead(200, {
      'Content-Type': TYPES[ext] ?? 'application/octet-stream',
      'Content-Length': String(info.size),
      'Cache-Control': hashed ? 'public, max-age=31536000, immutable' : 'no-cache',
      ...SECURITY_HEADERS,
    });
    if (req.method === 'HEAD') return void res.end();
    createReadStream(file).pipe(res);
  };
}
