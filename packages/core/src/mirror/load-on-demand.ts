import type { OnDemandModule } from './repo/context.js';

/**
 * What the mirror loads on first use (on-demand.ts), for the facades that make a context
 * (session-mirror.ts, repository.ts): the one place it is imported, so a bundler makes one chunk
 * of it.
 */
let loaded: Promise<OnDemandModule> | undefined;

/**
 * The module, imported once: each `import()` resolves its specifier again, which under a loader's
 * hooks (tsx, a test runner) is a round trip to the hooks' thread — paid by every session a
 * start-up check verifies (measured in `bench/adopted-sessions.ts`). A failed load (a chunk the
 * page could not fetch) is tried again at the next call.
 */
export const loadOnDemand = (): Promise<OnDemandModule> =>
  (loaded ??= import('./on-demand.js').catch((err: unknown) => {
    loaded = undefined;
    throw err;
  }));
