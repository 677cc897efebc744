import { playwright } from '@vitest/browser-playwright';
import { configDefaults, defineConfig } from 'vitest/config';

// Workspace packages resolve to their TypeScript sources (the `source` export condition).
const nodeConditions = ['source', 'module', 'node', 'import', 'default'];
const browserConditions = ['source', 'browser', 'module', 'import', 'default'];

// Debian's chromium (scripts/setup.mjs installs it when missing); playwright's own browser
// download is never used. packages/browser-fs/test/pages.test.ts launches the same binary.
const chromium = '/usr/bin/chromium';
const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

// The inner loop (`npm run test:unit`): the pure and in-process suites of
// core, git, transcripts, the SQLite side of sqlite, the project auto-commit's decision and the
// CLI's argument parsing. Everything else
// of Node — child processes, PostgreSQL, native git on real projects, the cross-package suites of
// test/integration — is the `integration` project; `npm test` runs every project.
const unit = [
  'packages/core/test/**/*.test.ts',
  'packages/git/test/codec.test.ts',
  'packages/git/test/delta.test.ts',
  'packages/git/test/pack-speed.test.ts',
  'packages/git/test/package.test.ts',
  'packages/git/test/sliced-work.test.ts',
  'packages/git/test/tree-bytes.test.ts',
  'packages/transcripts/test/**/*.test.ts',
  'packages/project/test/*.test.ts',
  'packages/sqlite/test/adopted-markers.conformance.test.ts',
  'packages/sqlite/test/computed-markers.test.ts',
  'packages/sqlite/test/memory-dag.conformance.test.ts',
  'packages/sqlite/test/pragmas.test.ts',
  'packages/sqlite/test/reading-fingerprint.test.ts',
  'packages/sqlite/test/sqlite.conformance.test.ts',
  'packages/sqlite/test/app-databases/docs-examples.test.ts',
  'packages/sqlite/test/config-schema.test.ts',
  'packages/sqlite/test/app-databases/mapping-errors.test.ts',
  'packages/sqlite/test/app-databases/messages-schema.test.ts',
  'packages/sqlite/test/app-databases/open-turns.test.ts',
  'packages/cli/test/args.test.ts',
  'packages/cli/test/json-doc.test.ts',
];
const browserTests = '**/*.browser.test.ts';

export default defineConfig({
  test: {
    projects: [
      {
        resolve: { conditions: nodeConditions },
        // Forked workers get these as node --conditions, which also steer require(): 'module' or
        // 'import' there would hand CommonJS packages (pg → pg-pool) an ES module.
        ssr: { resolve: { conditions: ['source', 'node'] } },
        test: {
          name: 'unit',
          include: unit,
          exclude: [...configDefaults.exclude, browserTests],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          pool: 'forks',
        },
      },
      {
        resolve: { conditions: nodeConditions },
        ssr: { resolve: { conditions: ['source', 'node'] } },
        test: {
          name: 'integration',
          include: ['packages/*/test/**/*.test.ts', 'examples/*/test/**/*.test.ts', 'test/integration/**/*.test.ts'],
          exclude: [...configDefaults.exclude, browserTests, 'packages/mastra/test/**', ...unit],
          // Children of these tests run plain node on the built packages (dist/): build first.
          globalSetup: ['test/build.global-setup.ts', 'test/postgres.global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          pool: 'forks',
        },
      },
      {
        // packages/mastra's tests run the real Mastra packages, whose dependency tree holds
        // packages with a `source` export condition of their own (pointing at TypeScript they do
        // not all ship): Node, given the workspace's condition, would load those. Vite still
        // resolves the workspace's own packages (not in node_modules, so inlined) through it.
        resolve: { conditions: nodeConditions },
        ssr: { resolve: { conditions: ['node'] } },
        test: {
          name: 'mastra',
          include: ['packages/mastra/test/**/*.test.ts'],
          // Mastra's PostgreSQL tests read ENTITY_GIT_PG_URL only: this sets it for them.
          globalSetup: ['test/postgres.global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          pool: 'forks',
        },
      },
      {
        // Tests that run inside Chromium itself (vitest browser mode, pages served over http on localhost).
        resolve: { conditions: browserConditions },
        test: {
          name: 'browser',
          include: [
            'packages/browser-fs/test/**/*.browser.test.ts',
            'packages/transcripts/test/**/*.browser.test.ts',
            'packages/langgraph/test/**/*.browser.test.ts',
          ],
          // A git smart-HTTP server on 127.0.0.1 for remote.browser.test.ts (runs in Node).
          globalSetup: [
            'packages/browser-fs/test/git-server.global-setup.ts',
            'packages/transcripts/test/node-ids.global-setup.ts',
            'packages/langgraph/test/python-ids.global-setup.ts',
          ],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          browser: {
            enabled: true,
            headless: true,
            screenshotFailures: false,
            provider: playwright({ launchOptions: { executablePath: chromium, args: chromiumArgs } }),
            instances: [{ browser: 'chromium' }],
          },
        },
      },
    ],
  },
});
