// A branch's timeline read in pages: on open, its turn count and the newest page (what the
// turn on screen and the timeline rows in view need); the other pages when a step, a jump or
// the timeline's scroll needs them, and the rest in the background, a page at a time, so a link
// to any turn finds its commit. Online the server pages `git_history`; offline core's handlers
// answer the whole timeline at once (a result without `total`), and the history is whole from the
// start. Kept per backend, session and branch while the branch's tip and length stay the same.
import type { HistoryPageResult, HistoryResult, TimelineCommit } from 'ws-server/protocol';
import type { Backend } from './backend.js';

/** Commits read on open and per page a step or the timeline needs. */
export const PAGE = 100;
/** Commits per background read of the rest. */
export const REST_PAGE = 500;

/** A branch's timeline, newest first, as long as the branch; a commit not read yet is undefined. */
export interface Timeline extends Omit<HistoryResult, 'commits'> {
  commits: (TimelineCommit | undefined)[];
}

export interface PagedHistory {
  /** Filled in place as pages arrive. */
  readonly history: Timeline;
  /** Commits `from` to `to` (exclusive, newest first, clamped to the branch) read. */
  ensure(from: number, to: number): Promise<void>;
  /** Every commit read. */
  ensureAll(): Promise<void>;
  /** The commit's place (0: the tip), every page read first when it is not among those read; -1 when not on the branch. */
  indexOf(sha: string): Promise<number>;
  /** The rest read in the background, a page at a time (started once). */
  readRest(): void;
  /** Told after pages arrive (the timeline draws the rows it stood in for). */
  onFill: ((from: number, to: number) => void) | null;
}

const isPage = (r: HistoryResult | HistoryPageResult): r is HistoryPageResult => 'total' in r;

/** Timelines kept per backend: the most recently opened. */
const KEPT = 8;
const kept = new WeakMap<Backend, Map<string, PagedHistory>>();

/** The branch's timeline (default: HEAD's) with its newest page read (or whole, offline). */
export async function openHistory(b: Backend, sessionId: string, branch?: string): Promise<PagedHistory> {
  const first = await b.call('git_history', {
    session_id: sessionId,
    ...(branch ? { branch } : {}),
    offset: 0,
    limit: PAGE,
  });
  let byKey = kept.get(b);
  if (!byKey) kept.set(b, (byKey = new Map()));
  const key = `${sessionId}\0${first.branch ?? ''}`;
  const known = byKey.get(key);
  const total = isPage(first) ? first.total : first.commits.length;
  byKey.delete(key);
  const same =
    known && known.history.commits.length === total && known.history.commits[0]?.sha === first.commits[0]?.sha;
  const paged = same ? known : pagedHistory(b, first);
  if (first.branch !== null) byKey.set(key, paged);
  for (const k of byKey.keys()) if (byKey.size > KEPT) byKey.delete(k);
  return paged;
}

function pagedHistory(b: Backend, first: HistoryResult | HistoryPageResult): PagedHistory {
  const total = isPage(first) ? first.total : first.commits.length;
  const commits: (TimelineCommit | undefined)[] = Array.from({ length: total });
  const history: Timeline = { session_id: first.session_id, branch: first.branch, commits };
  const place = (r: HistoryResult | HistoryPageResult) => {
    const at = isPage(r) ? r.offset : 0;
    r.commits.forEach((c, i) => {
      commits[at + i] = c;
    });
    return at;
  };
  place(first);
  /** Reads under way, by offset: how many commits each asked for. */
  const inFlight = new Map<number, { limit: number; p: Promise<void> }>();
  let restStarted = false;

  /** The page at `offset` (`limit` commits), once. A branch that moved meanwhile is read whole again. */
  const read = (offset: number, limit: number): Promise<void> => {
    const under = inFlight.get(offset);
    if (under && under.limit >= limit) return under.p;
    const p = (async () => {
      const branch = history.branch ?? undefined;
      const r = await b.call('git_history', {
        session_id: history.session_id,
        ...(branch ? { branch } : {}),
        offset,
        limit,
      });
      if (isPage(r) && r.total !== commits.length) {
        // The branch grew or moved: its commits all read again, at their new places.
        const whole = await b.call('git_history', { session_id: history.session_id, ...(branch ? { branch } : {}) });
        commits.length = 0;
        commits.push(...whole.commits);
        paged.onFill?.(0, commits.length);
        return;
      }
      const at = place(r);
      paged.onFill?.(at, at + r.commits.length);
    })();
    const entry = { limit, p };
    inFlight.set(offset, entry);
    void p
      .catch(() => undefined)
      .then(() => {
        if (inFlight.get(offset) === entry) inFlight.delete(offset);
      });
    return p;
  };

  const missing = (from: number, to: number): number => {
    for (let i = Math.max(0, from); i < Math.min(to, commits.length); i++) if (commits[i] === undefined) return i;
    return -1;
  };

  const paged: PagedHistory = {
    history,
    onFill: null,
    async ensure(from, to) {
      for (let i = missing(from, to); i >= 0; i = missing(i, to)) {
        const start = Math.floor(i / PAGE) * PAGE;
        const pending = [...inFlight].find(([o, r]) => o <= i && i < o + r.limit)?.[1].p;
        await (pending ?? read(start, PAGE));
        if (commits[i] === undefined) {
          // A background page covering i arrived without it (the branch moved): read i's own page.
          await read(start, PAGE);
          if (commits[i] === undefined) return;
        }
      }
    },
    async ensureAll() {
      await paged.ensure(0, commits.length);
    },
    async indexOf(sha) {
      const i = commits.findIndex((c) => c?.sha === sha);
      if (i >= 0 || missing(0, commits.length) < 0) return i;
      await paged.ensureAll();
      return commits.findIndex((c) => c?.sha === sha);
    },
    readRest() {
      if (restStarted) return;
      restStarted = true;
      void (async () => {
        for (let i = missing(0, commits.length); i >= 0; i = missing(i, commits.length)) {
          // One page after another, each after the page has had a frame: the user's steps go first.
          await new Promise((r) => setTimeout(r, 0));
          try {
            await read(i, Math.min(REST_PAGE, commits.length - i));
          } catch {
            return; // read when needed instead
          }
          if (commits[i] === undefined) return;
        }
      })();
    },
  };
  return paged;
}
