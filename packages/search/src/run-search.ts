import {
  ROLES,
  hasEveryWord,
  matcherOf,
  searchQuery,
  searchText,
  searchWords,
  searchHit,
  type DagNode,
  type SearchHit,
  type SearchQuery,
  type SearchResult,
} from '@entity-git/core';
import { ObjectStore, fromUtf8, joinPath, toHex, type Store } from '@entity-git/git';
import type Database from 'better-sqlite3';

interface Candidate {
  id: number;
  blob: Uint8Array;
  session: string;
  dir: string;
  head: string | null;
}

interface Place {
  name: string;
  turn: number;
  commit_id: Uint8Array;
}

/**
 * Answers a query from the index: the full-text index (or, for a regular expression, every
 * message the filters leave) gives candidates in rank order, a page at a time; each is read from
 * its repository and checked against the query before it counts, so a hit is always exact.
 */
export async function runSearch(db: Database.Database, store: Store, input: SearchQuery): Promise<SearchResult> {
  const q = searchQuery(input);
  const regex = q.regex === true;
  const matcher = matcherOf(q.text, regex);
  const where: string[] = [];
  const args: unknown[] = [];
  if (!regex) {
    where.push('words MATCH ?');
    args.push(
      searchWords(q.text)
        .map((w) => `"${w}"`)
        .join(' '),
    );
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
      `EXISTS (SELECT 1 FROM places p JOIN branches b ON b.id = p.branch WHERE p.doc = d.id AND ${onBranch.sql})`,
    );
    args.push(...onBranch.args);
  }
  const from = regex
    ? 'docs d JOIN sessions s ON s.id = d.session'
    : 'words w JOIN docs d ON d.id = w.rowid JOIN sessions s ON s.id = d.session';
  // Newest first, in the full-text index's own order: the first page is read without sorting every match.
  const order = regex ? 'd.id DESC' : 'w.rowid DESC';
  const page = db.prepare(
    `SELECT d.id, d.blob, s.session, s.dir, s.head FROM ${from} WHERE ${where.join(' AND ') || '1'}
     ORDER BY ${order} LIMIT ? OFFSET ?`,
  );
  const places = db.prepare(
    `SELECT b.name, p.turn, p.commit_id FROM places p JOIN branches b ON b.id = p.branch
     WHERE p.doc = ?${q.allBranches === true ? '' : ' AND b.name = ?'} ORDER BY b.name`,
  );
  const objects = new Map<string, ObjectStore>();
  const hits: SearchHit[] = [];
  const read = (row: Candidate): Promise<Uint8Array> => {
    let os = objects.get(row.dir);
    if (os === undefined) objects.set(row.dir, (os = new ObjectStore(store, joinPath(row.dir, '.git'))));
    return os.readTyped(toHex(row.blob), 'blob');
  };
  // The first page is what the answer needs when every candidate holds the words (the usual case);
  // its messages are read at once, as the repositories are many and each read waits on the disk.
  let size = q.limit + 1;
  for (let offset = 0; ; offset += size, size = Math.min(500, size * 4)) {
    const rows = page.all(...args, size, offset) as Candidate[];
    const blobs = await Promise.all(rows.map(read));
    for (const [k, row] of rows.entries()) {
      const node = JSON.parse(fromUtf8(blobs[k]!)) as DagNode;
      const text = searchText(node);
      matcher.lastIndex = 0;
      if (regex ? !matcher.test(text) : !hasEveryWord(text, q.text)) continue;
      if (hits.length === q.limit) return { hits, more: true };
      const at = places.all(row.id, ...(q.allBranches === true ? [] : [q.branch ?? row.head])) as Place[];
      hits.push(
        searchHit({
          session: row.session,
          head: row.head,
          asked: q.branch,
          node,
          text,
          places: at.map((p) => ({ branch: p.name, turn: p.turn, commit: toHex(p.commit_id) })),
          matcher,
        }),
      );
    }
    if (rows.length < size) return { hits, more: false };
  }
}

// Which branches a message must be on: any (every branch), the one asked, or its session's HEAD's.
function branchCondition(q: SearchQuery): { sql: string | null; args: unknown[] } {
  if (q.allBranches === true) return { sql: null, args: [] };
  if (q.branch !== undefined) return { sql: 'b.name = ?', args: [q.branch] };
  return { sql: 'b.name = s.head', args: [] };
}
