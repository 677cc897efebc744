// The app shell for offline use (VERSION and ASSETS are prepended at build time by
// vite.config.ts). Pages: network first, the cached page when the server is gone. Built files:
// cache first (their names carry their hash). /ws and /healthz always go to the network, so the
// app can tell "offline" from "online"; so do the repository copies of /repo/.
/* global VERSION, ASSETS */
const CACHE = `entity-git-replay-${VERSION}`;
const scope = new URL(self.registration.scope);
const NETWORK_ONLY = new Set([`${scope.pathname}ws`, `${scope.pathname}healthz`]);

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(ASSETS))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      for (const key of await caches.keys())
        if (key.startsWith('entity-git-replay-') && key !== CACHE) await caches.delete(key);
      await self.clients.claim();
    })(),
  );
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== 'GET' || url.origin !== scope.origin || NETWORK_ONLY.has(url.pathname)) return;
  if (url.pathname.startsWith(`${scope.pathname}repo/`)) return;
  if (request.mode === 'navigate') {
    event.respondWith(
      fetch(request).catch(
        async () => (await caches.match(new URL('./index.html', scope).href, { cacheName: CACHE })) ?? Response.error(),
      ),
    );
    return;
  }
  event.respondWith(caches.match(request, { cacheName: CACHE }).then((hit) => hit ?? fetch(request)));
});
