import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { defineConfig, type Plugin } from 'vite';

/**
 * Emits `sw.js`: src/service-worker.js with the list of built files, so the worker precaches
 * exactly this build and a reload works with the server gone. The list's hash names the cache,
 * so a new build replaces the old one.
 */
function serviceWorker(): Plugin {
  return {
    name: 'browser-replay:service-worker',
    enforce: 'post',
    // The app registers the worker only in a build (a dev server has no sw.js). Not
    // `import.meta.env.PROD`: that follows NODE_ENV, which a test runner sets to "test".
    config: (_config, { command }) => ({ define: { __SERVICE_WORKER__: JSON.stringify(command === 'build') } }),
    generateBundle(_options, bundle) {
      const files = Object.keys(bundle)
        .filter((f) => !f.endsWith('.map') && f !== 'sw.js')
        .sort();
      const assets = ['./', './index.html', ...files.filter((f) => f !== 'index.html').map((f) => `./${f}`)];
      const version = createHash('sha256').update(assets.join('\n')).digest('hex').slice(0, 12);
      const body = readFileSync(new URL('./src/service-worker.js', import.meta.url), 'utf8');
      this.emitFile({
        type: 'asset',
        fileName: 'sw.js',
        source: `const VERSION = ${JSON.stringify(version)};\nconst ASSETS = ${JSON.stringify(assets)};\n${body}`,
      });
    },
  };
}

export default defineConfig({
  base: './',
  // Workspace packages resolve to their TypeScript sources (the `source` export condition).
  resolve: { conditions: ['source', 'browser', 'module', 'import', 'default'] },
  build: { outDir: 'dist/app', emptyOutDir: true, target: 'es2022', reportCompressedSize: false },
  plugins: [serviceWorker()],
  // `vite` (dev): the page on :5173, the actions proxied to a ws-server on :8787 started with
  // `--origin http://localhost:5173`.
  server: {
    proxy: {
      '/ws': { target: 'ws://127.0.0.1:8787', ws: true },
      '/healthz': 'http://127.0.0.1:8787',
      '/repo/': 'http://127.0.0.1:8787',
    },
  },
});
