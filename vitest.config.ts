import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { conditions: ['source', 'module', 'node', 'import', 'default'] },
  // Forked workers get these as node --conditions, which also steer require(): 'module' or
  // 'import' there would hand CommonJS packages (pg → pg-pool) an ES module.
  ssr: { resolve: { conditions: ['source', 'node'] } },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'examples/*/test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
