import type { Identity } from '@entity-git/git';

/** Author and committer of session commits when no identity is given. */
export const DEFAULT_IDENTITY: Identity = Object.freeze({ name: 'entity-git', email: 'entity-git@localhost' });
