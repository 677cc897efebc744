import type { Role } from '../model/types.js';

/** What `search` is asked (docs/design.md, 'Search'). Validated by {@link searchQuery}. */
export interface SearchQuery {
  /** Words that must all occur in a message (case and diacritics folded), or a regular expression with `regex`. */
  text: string;
  /** Only this session. Default: every session. */
  session?: string;
  /** Only messages of this role. Default: every role. */
  role?: Role;
  /** Only messages on this branch (in every session that has one). Default: each session's HEAD branch. */
  branch?: string;
  /** Every branch of every session; a message shared by several branches is one hit. Default false. */
  allBranches?: boolean;
  /** `text` is a JavaScript regular expression (flag `u`), matched against each message's text. Default false. */
  regex?: boolean;
  /** The most hits returned, 1–1,000. Default 20. */
  limit?: number;
}

/** One message found: where it is, and the text around the match. */
export interface SearchHit {
  session: string;
  /** The branch it is shown on: the one asked for, else HEAD's when it holds it, else `main`, else the first by name. */
  branch: string;
  /** Every branch of the session holding this message (the same bytes), by name; only those searched. */
  branches: string[];
  /** The turn that brought the message onto `branch`, and that turn's commit: open it to replay. */
  turn: number;
  commit: string;
  node: string;
  role: Role;
  seq: number;
  /** Up to about 160 characters of the message's text around the first match, whitespace folded. */
  snippet: string;
  /** Where the matched words are in `snippet`: `[start, end)` UTF-16 offsets. */
  highlights: [number, number][];
}

export interface SearchResult {
  hits: SearchHit[];
  /** True when more messages matched than `limit`. */
  more: boolean;
}

/**
 * A search index an action or a command asks (`@entity-git/search` on Node, the replay app's own
 * in the browser). Only `search` is needed to answer `search_messages`.
 */
export interface SearchSource {
  search(query: SearchQuery): Promise<SearchResult>;
}
