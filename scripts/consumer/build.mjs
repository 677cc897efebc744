// Builds browser.js with vite (the consumer's own, from the registry) and prints one JSON line:
// each chunk's size and gzip size, and which chunks the first load fetches.
import { build } from 'vite';
import { gzipSync } from 'node:zlib';

const out = [
  await build({
    root: process.cwd(),
    logLevel: 'warn',
    configFile: false,
    build: { write: false, target: 'es2022', minify: true, rollupOptions: { input: 'browser.js' } },
  }),
].flat();
const chunks = out.flatMap((o) => o.output).filter((c) => c.type === 'chunk');
const byName = new Map(chunks.map((c) => [c.fileName, c]));
// The first load: the entry and what it imports statically (dynamic imports load on first use).
const initial = new Set();
const visit = (name) => {
  if (initial.has(name)) return;
  initial.add(name);
  for (const i of byName.get(name)?.imports ?? []) visit(i);
};
for (const c of chunks) if (c.isEntry) visit(c.fileName);
const rows = chunks.map((c) => ({
  file: c.fileName,
  initial: initial.has(c.fileName),
  bytes: Buffer.byteLength(c.code),
  gzip: gzipSync(c.code, { level: 9 }).length,
}));
const sum = (rs) => rs.reduce((n, r) => n + r.gzip, 0);
console.log(JSON.stringify({ chunks: rows, initialGzip: sum(rows.filter((r) => r.initial)), totalGzip: sum(rows) }));
