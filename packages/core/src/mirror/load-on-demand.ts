/**
 * What the mirror loads on first use (on-demand.ts), for the facades that make a context
 * (session-mirror.ts, repository.ts): the one place it is imported, so a bundler makes one chunk
 * of it.
 */
export const loadOnDemand = () => import('./on-demand.js');
