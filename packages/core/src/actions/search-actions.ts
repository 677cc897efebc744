// The search action: a query over every session's messages, answered by the search index the
// host gives (`@entity-git/search` on Node, the replay app's own in the browser).
import type { Role } from '../model/types.js';
import { searchQuery } from '../search/search-text.js';
import type { SearchSource } from '../search/search-types.js';
import type { Handlers } from './handlers.js';
import { invalidArgument, optionalString, paramsObject } from './params.js';

export interface SearchActionsOptions {
  /** Needed by `search_messages`. */
  search?: SearchSource;
}

/** The `search_messages` handler: params validated here, once (`INVALID_ARGUMENT` names the one at fault). */
export function searchActions(options: SearchActionsOptions): Handlers<'search_messages'> {
  return {
    async search_messages(params) {
      const p = paramsObject(params);
      const search = options.search ?? invalidArgument('this server keeps no search index (no search option)');
      const flag = (key: string): boolean => {
        const v = p[key];
        if (v !== undefined && v !== null && typeof v !== 'boolean')
          invalidArgument(`${key} must be a boolean`, { param: key });
        return v === true;
      };
      if (p.limit !== undefined && p.limit !== null && typeof p.limit !== 'number')
        invalidArgument('limit must be an integer', { param: 'limit' });
      const query = searchQuery({
        text: typeof p.query === 'string' ? p.query : invalidArgument('query must be a string', { param: 'query' }),
        session: optionalString(p, 'session_id'),
        role: optionalString(p, 'role') as Role | undefined,
        branch: optionalString(p, 'branch'),
        allBranches: flag('all_branches'),
        regex: flag('regex'),
        limit: (p.limit as number | undefined | null) ?? undefined,
      });
      return search.search(query);
    },
  };
}
