// Search: the box at the top of the sidebar and the page of hits (`#/search/<query>[/all]`). Online
// the server's index answers (`search_messages`); offline the copies saved in this browser do
// (offline-search.ts). A hit links to its turn at its commit on its branch: the replay opens there.
import type { SearchHit, SearchResult } from '@entity-git/core';
import type { Backend } from './backend.js';
import { h } from './dom.js';
import { plural, sessionHref, short } from './format.js';

export interface SearchState {
  query: string;
  allBranches: boolean;
  result: SearchResult | null;
  error: { text: string; code: string } | null;
}

export const searchHref = (query: string, allBranches: boolean) =>
  `#/search/${encodeURIComponent(query)}${allBranches ? '/all' : ''}`;

/**
 * What the user has typed and not submitted yet: the sidebar is drawn again whenever the page's
 * data arrives, and a box drawn anew must keep the words being typed into it.
 */
let draft = '';

/** The search form: a query and "every branch"; submitting sets the route. */
export function renderSearchBox(current: { query: string; allBranches: boolean } | null): HTMLElement {
  return h(
    'form',
    {
      class: 'search-form',
      role: 'search',
      'data-testid': 'search-form',
      onsubmit: (e: Event) => {
        e.preventDefault();
        const form = e.target as HTMLFormElement;
        const query = (form.elements.namedItem('q') as HTMLInputElement).value.trim();
        const all = (form.elements.namedItem('all') as HTMLInputElement).checked;
        if (query !== '') location.hash = searchHref(query, all);
      },
    },
    h('label', { for: 'search-input', class: 'sr-only' }, 'Search messages'),
    h('input', {
      id: 'search-input',
      name: 'q',
      type: 'search',
      placeholder: 'Search messages',
      value: current?.query ?? draft,
      autocomplete: 'off',
      oninput: (e: Event) => {
        draft = (e.target as HTMLInputElement).value;
      },
      'data-testid': 'search-input',
    }),
    h('button', { type: 'submit', 'data-testid': 'search-submit' }, 'Search'),
    h(
      'label',
      { class: 'search-all' },
      h('input', {
        type: 'checkbox',
        name: 'all',
        checked: current?.allBranches === true,
        'data-testid': 'search-all',
      }),
      ' every branch',
    ),
  );
}

/** Runs the query the route names through the backend (the server's index, or this browser's). */
export async function loadSearch(backend: Backend, query: string, allBranches: boolean): Promise<SearchState> {
  try {
    const result = await backend.call('search_messages', { query, all_branches: allBranches, limit: 50 });
    return { query, allBranches, result, error: null };
  } catch (err) {
    const e = err as { code?: string; message?: string };
    return { query, allBranches, result: null, error: { code: e.code ?? 'ERROR', text: e.message ?? String(err) } };
  }
}

export function renderSearchResults(
  s: SearchState,
  titles: Map<string, string | null>,
  online: boolean,
): HTMLElement[] {
  const where = online ? 'on the server' : 'in the copies saved in this browser';
  const head = h('h1', { class: 'search-title' }, `Search: “${s.query}”`);
  if (s.error !== null)
    return [head, h('p', { class: 'notice error', role: 'alert', 'data-testid': 'search-error' }, s.error.text)];
  const hits = s.result?.hits ?? [];
  const count = `${plural(hits.length, 'message')}${s.result?.more ? ' (more match: narrow the query)' : ''} ${where}${s.allBranches ? ', every branch' : ''}`;
  return [
    head,
    h('p', { class: 'search-count', role: 'status', 'data-testid': 'search-count' }, count),
    hits.length === 0
      ? h('p', { class: 'empty', 'data-testid': 'search-empty' }, 'Nothing found.')
      : h(
          'ol',
          { class: 'search-hits', 'data-testid': 'search-hits' },
          hits.map((hit) => renderHit(hit, titles)),
        ),
  ];
}

function renderHit(hit: SearchHit, titles: Map<string, string | null>): HTMLElement {
  const also = hit.branches.filter((b) => b !== hit.branch);
  return h(
    'li',
    {},
    h(
      'a',
      {
        href: sessionHref(hit.session, hit.commit, hit.branch),
        class: 'search-hit',
        'data-testid': 'search-hit',
        'data-session': hit.session,
        'data-node': hit.node,
        'data-commit': hit.commit,
      },
      h('span', { class: 'hit-where' }, titles.get(hit.session) ?? hit.session),
      h(
        'small',
        { class: 'hit-meta' },
        `Turn ${hit.turn} · ${hit.branch}${also.length > 0 ? ` (also ${also.join(', ')})` : ''} · ${hit.role} · ${short(hit.commit)}`,
      ),
      h('span', { class: 'hit-snippet' }, snippetNodes(hit)),
    ),
  );
}

/** The snippet as text with the matches in <mark> (text nodes only: a message is shown, never interpreted). */
function snippetNodes(hit: SearchHit): (string | HTMLElement)[] {
  const out: (string | HTMLElement)[] = [];
  let at = 0;
  for (const [from, to] of hit.highlights) {
    if (from > at) out.push(hit.snippet.slice(at, from));
    out.push(h('mark', {}, hit.snippet.slice(from, to)));
    at = to;
  }
  if (at < hit.snippet.length) out.push(hit.snippet.slice(at));
  return out;
}
