import {
  ROLES,
  hasEveryWord,
  matcherOf,
  searchQuery,
  searchWords,
  searchHit,
  type Role,
  type SearchHit,
  type SearchQuery,
  type SearchResult,
} from '@entity-git/core';
import { toHex } from '@entity-git/git';
import { DocTexts } from './doc-texts.js';
import { TURN_BLOCK, unpackNodeId, type Prepared, type TextPacker } from './index-schema.js';

interface Candidate {
  id: number;
  node: string | Uint8Array;
  role: number;
  seq: number;
  body: Uint8Array | null;
  session: string;
  head: string | null;
}

interface Place {
  name: string;
  turn: number;
  commit_id: Uint8Array;
}

/**
 * Answers a query from the index alone: the full-text index (or, for a regular expression, every
 * message the filters leave) gives candidates newest first, a page at a time; each one's text,
 * kept in the index, is checked against the query before it counts (so a hit is always exact)
 * and gives the snippet. No repository is read.
 */
export function runSearch(sql: Prepared, packer: TextPacker, input: SearchQuery): SearchResult {
  const q = searchQuery(input);
  const regex = q.regex === true;
  const matcher = matcherOf(q.text, regex);
  const where: string[] = [];
  const args: unknown[] = [];
  // In one session the word's list (hundreds of thousands of ids at a million messages) is not
  // walked: a session of up to SESSION_SCAN messages is read whole, newest first, each message
  // checked against its text; a longer one's messages are each looked up among the word's.
  // A query of common words alone (none in the full-text index) reads the messages newest
  // first: they are in most messages, so a page is near the top.
  const inSession = q.session !== undefined;
  const narrowing = regex ? [] : packer.narrowing(searchWords(q.text));
  const scan = narrowing.length === 0 || (inSession && sessionSize(sql, q.session!) <= SESSION_SCAN);
  if (!scan) {
    where.push(inSession ? 'd.id IN (SELECT rowid FROM words WHERE words MATCH ?)' : 'words MATCH ?');
    args.push(narrowing.map((w) => `"${w}"`).join(' '));
  }
  if (q.session !== undefined) {
    where.push('s.session = ?');
    args.push(q.session);
  }
  if (q.role !== undefined) {
    where.push('d.role = ?');
    args.push(ROLES.indexOf(q.role));
  }
  const onBranch = branchCondition(q);
  if (onBranch.sql !== null) {
    where.push(
      `(EXISTS (SELECT 1 FROM branches b WHERE b.session = d.session AND b.n = d.branch AND ${onBranch.sql})
        OR EXISTS (SELECT 1 FROM places p JOIN branches b ON b.id = p.branch WHERE p.doc = d.id AND ${onBranch.sql}))`,
    );
    args.push(...onBranch.args, ...onBranch.args);
  }
  const byDocs = scan || inSession;
  const from = byDocs
    ? 'docs d JOIN sessions s ON s.id = d.session'
    : 'words w JOIN docs d ON d.id = w.rowid JOIN sessions s ON s.id = d.session';
  // Newest first, in the full-text index's own order: the first page is read without sorting every match.
  const order = byDocs ? 'd.id DESC' : 'w.rowid DESC';
  const page = sql(
    `SELECT d.id, d.node, d.role, d.seq, d.body, s.session, s.head FROM ${from} WHERE ${where.join(' AND ') || '1'}
     ORDER BY ${order} LIMIT ? OFFSET ?`,
  );
  const places = sql(placesOf(q.allBranches === true ? '' : ' AND b.name = ?'));
  const texts = new DocTexts(sql, packer);
  const hits: SearchHit[] = [];
  // The first page is what the answer needs when every candidate holds the words (the usual case).
  let size = q.limit + 1;
  for (let offset = 0; ; offset += size, size = Math.min(500, size * 4)) {
    const rows = page.all(...args, size, offset) as Candidate[];
    for (const row of rows) {
      const text = texts.text(row.id, row.body);
      matcher.lastIndex = 0;
      if (regex ? !matcher.test(text) : !hasEveryWord(text, q.text)) continue;
      if (hits.length === q.limit) return { hits, more: true };
      const on = q.allBranches === true ? [] : [q.branch ?? row.head];
      const at = places.all(row.id, ...on, row.id, ...on) as Place[];
      hits.push(
        searchHit({
          session: row.session,
          head: row.head,
          asked: q.branch,
          node: { id: unpackNodeId(row.node), role: ROLES[row.role] as Role, seq: row.seq },
          text,
          places: at.map((p) => ({ branch: p.name, turn: p.turn, commit: toHex(p.commit_id) })),
          matcher,
        }),
      );
    }
    if (rows.length < size) return { hits, more: false };
  }
}

const SESSION_SCAN = 2000;

/**
 * Where a message (`?`, twice) is: its first branch, kept in its row, and the others, in places;
 * each with its turn and that turn's commit, by branch name. `and` narrows the branches (a `?` each).
 */
export const placesOf = (and: string): string =>
  `SELECT b.name, d.turn, ${COMMIT_AT('d.turn')} AS commit_id FROM docs d
     JOIN branches b ON b.session = d.session AND b.n = d.branch
     JOIN turns t ON t.branch = b.id AND t.block = d.turn / ${TURN_BLOCK} WHERE d.id = ?${and}
   UNION ALL
   SELECT b.name, p.turn, ${COMMIT_AT('p.turn')} AS commit_id FROM places p JOIN branches b ON b.id = p.branch
     JOIN turns t ON t.branch = p.branch AND t.block = p.turn / ${TURN_BLOCK} WHERE p.doc = ?${and}
   ORDER BY 1`;

// A turn's commit id: its 20 bytes in its block's row (turns t).
const COMMIT_AT = (turn: string) => `substr(t.commits, ${turn} % ${TURN_BLOCK} * 20 + 1, 20)`;

const sessionSize = (sql: Prepared, session: string): number =>
  (
    sql(
      `SELECT count(*) AS n FROM (SELECT 1 FROM docs WHERE session = (SELECT id FROM sessions WHERE session = ?) LIMIT ${SESSION_SCAN + 1})`,
    ).get(session) as { n: number }
  ).n;

// Which branches a message must be on: any (every branch), the one asked, or its session's HEAD's.
function branchCondition(q: SearchQuery): { sql: string | null; args: unknown[] } {
  if (q.allBranches === true) return { sql: null, args: [] };
  if (q.branch !== undefined) return { sql: 'b.name = ?', args: [q.branch] };
  return { sql: 'b.name = s.head', args: [] };
}
