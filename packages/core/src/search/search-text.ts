import { EntityGitError } from '@entity-git/git';
import { canonicalJson } from '../model/canonical-json.js';
import { textOf } from '../model/text.js';
import { ROLES, type DagNode, type Role } from '../model/types.js';
import { assertId } from '../model/names.js';
import type { SearchHit, SearchQuery } from './search-types.js';

export const SEARCH_LIMIT_DEFAULT = 20;
export const SEARCH_LIMIT_MAX = 1000;
const QUERY_MAX = 1000;
const SNIPPET_BEFORE = 60;
const SNIPPET_LENGTH = 160;

const invalidArgument = (message: string, data: Record<string, unknown>): never => {
  throw new EntityGitError('INVALID_ARGUMENT', message, data);
};

/**
 * The text of a message that search reads: its readable text (`textOf`), or, for content with no
 * text (a tool call's arguments, a structured result), the content's canonical JSON.
 */
export function searchText(node: Pick<DagNode, 'content'>): string {
  const text = textOf(node.content);
  if (text !== '' || node.content === null || node.content === '') return text;
  return canonicalJson(node.content).trimEnd();
}

/** The words of a query or a text, as the indexes split them: runs of letters and digits, lower-cased. */
export function searchWords(text: string): string[] {
  return [...text.matchAll(/[\p{L}\p{N}\p{M}\p{Co}]+/gu)].map((m) => m[0].toLowerCase());
}

/** A query checked once at the edge (action or command): `INVALID_ARGUMENT` names what is wrong. */
export function searchQuery(q: SearchQuery): Required<Pick<SearchQuery, 'text' | 'limit'>> & SearchQuery {
  if (typeof q.text !== 'string' || q.text.trim() === '' || q.text.length > QUERY_MAX)
    invalidArgument(`the query must be a non-empty string of at most ${QUERY_MAX} characters`, { param: 'query' });
  if (q.regex === true) matcherOf(q.text, true);
  else if (searchWords(q.text).length === 0) invalidArgument('the query has no word to look for', { param: 'query' });
  if (q.session !== undefined) assertId(q.session, 'session');
  if (q.role !== undefined && !isRole(q.role))
    invalidArgument(`role must be user, assistant, tool or system, got ${JSON.stringify(q.role)}`, { param: 'role' });
  if (q.branch !== undefined && (typeof q.branch !== 'string' || q.branch === ''))
    invalidArgument('branch must be a non-empty string', { param: 'branch' });
  if (q.branch !== undefined && q.allBranches === true)
    invalidArgument('give a branch or every branch, not both', { param: 'branch' });
  const limit = q.limit ?? SEARCH_LIMIT_DEFAULT;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > SEARCH_LIMIT_MAX)
    invalidArgument(`limit must be an integer from 1 to ${SEARCH_LIMIT_MAX}`, { param: 'limit' });
  return { ...q, limit };
}

/**
 * What finds the query in a message's text: the regular expression itself, or every query word
 * where a word of the text starts (so `commit` finds `commit`, not `recommit`). Global and
 * case-insensitive, for the snippet's highlights.
 */
export function matcherOf(text: string, regex: boolean): RegExp {
  if (!regex) {
    const words = [...new Set(searchWords(text))].map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    return new RegExp(`(?<![\\p{L}\\p{N}\\p{M}\\p{Co}])(?:${words.join('|')})(?![\\p{L}\\p{N}\\p{M}\\p{Co}])`, 'giu');
  }
  try {
    return new RegExp(text, 'gu');
  } catch (err) {
    throw new EntityGitError('INVALID_ARGUMENT', `not a regular expression: ${(err as Error).message}`, {
      param: 'query',
    });
  }
}

/** Whether every word of the query is a word of `text` (what the full-text indexes answer). */
export function hasEveryWord(text: string, query: string): boolean {
  const words = new Set(searchWords(text));
  return searchWords(query).every((w) => words.has(w));
}

/** The text around the first match, whitespace folded, and where the matches are in it. */
export function snippetOf(text: string, matcher: RegExp): { snippet: string; highlights: [number, number][] } {
  const flat = text.replace(/\s+/g, ' ').trim();
  const re = new RegExp(matcher.source, matcher.flags.includes('g') ? matcher.flags : `${matcher.flags}g`);
  const first = re.exec(flat);
  const start = first === null ? 0 : Math.max(0, first.index - SNIPPET_BEFORE);
  const from = start > 0 && flat.charCodeAt(start) >= 0xdc00 && flat.charCodeAt(start) <= 0xdfff ? start + 1 : start;
  let to = Math.min(flat.length, from + SNIPPET_LENGTH);
  if (to < flat.length && flat.charCodeAt(to) >= 0xdc00 && flat.charCodeAt(to) <= 0xdfff) to--;
  const snippet = flat.slice(from, to);
  const highlights: [number, number][] = [];
  re.lastIndex = 0;
  for (const m of snippet.matchAll(re)) {
    if (m[0] === '') break;
    highlights.push([m.index, m.index + m[0].length]);
  }
  return { snippet, highlights };
}

/** Whether `role` is one of the four roles. */
export function isRole(role: unknown): role is Role {
  return (ROLES as readonly unknown[]).includes(role);
}

/** Where a message is on one branch: the turn that brought it there and that turn's commit. */
export interface HitPlace {
  branch: string;
  turn: number;
  commit: string;
}

/**
 * A hit as every index gives it: shown on the branch asked for, else HEAD's, else `main`, else the
 * first of `places` (sorted by name), with the snippet around the match.
 */
export function searchHit(o: {
  session: string;
  head: string | null;
  asked: string | undefined;
  node: Pick<DagNode, 'id' | 'role' | 'seq'>;
  text: string;
  places: readonly HitPlace[];
  matcher: RegExp;
}): SearchHit {
  const at = o.places;
  const shown =
    at.find((p) => p.branch === o.asked) ??
    at.find((p) => p.branch === o.head) ??
    at.find((p) => p.branch === 'main') ??
    at[0]!;
  return {
    session: o.session,
    branch: shown.branch,
    branches: at.map((p) => p.branch),
    turn: shown.turn,
    commit: shown.commit,
    node: o.node.id,
    role: o.node.role,
    seq: o.node.seq,
    ...snippetOf(o.text, o.matcher),
  };
}
