// The search bench's corpus: sessions of user messages and replies whose words follow Zipf's law
// over a vocabulary of 30,000 made-up words, as natural text does (a handful of words in every
// message, most words in few), so a query can be common, medium or rare. Deterministic: the same
// sessions, bytes and commit ids on every run.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { canonicalJson, type DagNode } from '../../packages/core/src/index.js';
import { openSqlite, type SqlStore } from '../../packages/sqlite/src/index.js';
import { BASE_TIME, mulberry32 } from './conversation.js';

const CHILD = fileURLToPath(new URL('../search-corpus-child.ts', import.meta.url));

const VOCABULARY = 30_000;
const SYLLABLES = 'ka lo mi ne ru ta so vi de ga po lu fe zi ho ba ri mo nu te'.split(' ');

/** The word of Zipf rank `r` (0 is the most frequent): syllables from the rank's digits, so every rank has its own word. */
export function wordOf(r: number): string {
  let w = '';
  let n = r;
  do {
    w += SYLLABLES[n % SYLLABLES.length];
    n = Math.floor(n / SYLLABLES.length);
  } while (n > 0);
  return w;
}

const CUMULATIVE = (() => {
  const c = new Float64Array(VOCABULARY);
  let sum = 0;
  for (let r = 0; r < VOCABULARY; r++) c[r] = sum += 1 / (r + 1);
  for (let r = 0; r < VOCABULARY; r++) c[r]! /= sum;
  return c;
})();

function zipfRank(u: number): number {
  let lo = 0;
  let hi = VOCABULARY - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (CUMULATIVE[mid]! >= u) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

export const corpusSessionId = (i: number) => `s${String(i).padStart(6, '0')}`;

/** Session `i`'s nodes from seq `from + 1`: `turns` turns of a user message and a reply, ~330 characters each. */
export function corpusNodes(i: number, turns: number, from = 0): DagNode[] {
  const r = mulberry32(0x5ea2c4 + i * 7919 + from);
  const id = corpusSessionId(i);
  const out: DagNode[] = [];
  for (let k = from + 1; k <= from + 2 * turns; k++) {
    let text = '';
    while (text.length < 330) text += `${text === '' ? '' : ' '}${wordOf(zipfRank(r()))}`;
    out.push({
      id: `${id}-n${k}`,
      session_id: id,
      seq: k,
      role: k % 2 === 1 ? 'user' : 'assistant',
      content: `${text}.`,
      predecessor: k === 1 ? null : `${id}-n${k - 1}`,
      caller: null,
      created_at: BASE_TIME + i * 1000 + k,
      metadata: null,
    });
  }
  return out;
}

export interface Corpus {
  dir: string;
  root: string;
  db: string;
  sessions: number;
  turns: number;
  messages: number;
  /** Canonical JSON of every message, in bytes (what the message files hold). */
  messageBytes: number;
  /**
   * The sessions that have a repository: per builder process `k` of `jobs`, sessions k, k + jobs,
   * … below `next[k]` (all of them when the build had the time). The others are in the DAG only.
   */
  repositories: { jobs: number; next: number[] };
  /** How long each step of the build took, ms (absent for a corpus reused from disk). */
  build?: { fill: number | null; repositories: number };
}

/** Whether session `i` of the corpus has a repository. */
export const hasRepository = (c: Pick<Corpus, 'repositories'>, i: number): boolean =>
  i < c.repositories.next[i % c.repositories.jobs]!;

/**
 * The corpus in `dir`, built there once and reused by later runs (`corpus.json` records it): an
 * SQLite DAG filled in one transaction, then each session's repository written by `mirror.sync`,
 * split over `jobs` processes that each take every `jobs`-th session, until `minutes` have passed
 * (the sessions left are in the DAG only; `hasRepository` says which).
 */
export async function searchCorpus(
  dir: string,
  o: { sessions: number; turns: number; jobs: number; minutes: number },
): Promise<Corpus> {
  const record = join(dir, 'corpus.json');
  if (existsSync(record)) {
    const c = JSON.parse(readFileSync(record, 'utf8')) as Corpus;
    if (c.sessions !== o.sessions || c.turns !== o.turns)
      throw new Error(`${dir} holds ${c.sessions} sessions of ${c.turns} turns, not ${o.sessions} of ${o.turns}`);
    return { ...c, build: undefined };
  }
  mkdirSync(dir, { recursive: true });
  const db = join(dir, 'dag.db');
  const root = join(dir, 'root');
  const { messageBytes, fill: fillMs } = await rows(dir, o.sessions, o.turns);
  const t1 = performance.now();
  const deadline = Date.now() + o.minutes * 60_000;
  const next = await Promise.all(
    Array.from({ length: o.jobs }, (_, part) =>
      buildPart({ db, root, sessions: o.sessions, part, parts: o.jobs, deadline }),
    ),
  );
  const c: Corpus = {
    dir,
    root,
    db,
    sessions: o.sessions,
    turns: o.turns,
    messages: o.sessions * o.turns * 2,
    messageBytes,
    repositories: { jobs: o.jobs, next },
    build: { fill: fillMs, repositories: performance.now() - t1 },
  };
  writeFileSync(record, JSON.stringify(c, null, 2));
  return c;
}

/** The DAG's rows, written once (`rows.json` says they are): a stopped build starts again at the repositories. */
async function rows(
  dir: string,
  sessions: number,
  turns: number,
): Promise<{ messageBytes: number; fill: number | null }> {
  const done = join(dir, 'rows.json');
  if (existsSync(done)) return JSON.parse(readFileSync(done, 'utf8')) as { messageBytes: number; fill: number | null };
  const store = await openSqlite({ file: join(dir, 'dag.db') });
  const t0 = performance.now();
  const messageBytes = await fill(store, sessions, turns);
  const made = { messageBytes, fill: performance.now() - t0 };
  await store.close();
  writeFileSync(done, JSON.stringify(made));
  return made;
}

async function fill(store: SqlStore, count: number, turns: number): Promise<number> {
  let bytes = 0;
  await store.db.transaction().execute(async (trx) => {
    for (let start = 0; start < count; start += 100) {
      const ids = Array.from({ length: Math.min(100, count - start) }, (_, k) => start + k);
      await trx
        .insertInto('sessions')
        .values(ids.map((i) => ({ id: corpusSessionId(i), title: `Session ${i}`, created_at: BASE_TIME + i * 1000 })))
        .execute();
      const nodes = ids.flatMap((i) => corpusNodes(i, turns));
      for (const n of nodes) bytes += Buffer.byteLength(canonicalJson(n));
      for (let k = 0; k < nodes.length; k += 100) {
        await trx
          .insertInto('nodes')
          .values(nodes.slice(k, k + 100).map((n) => ({ ...n, content: JSON.stringify(n.content), metadata: null })))
          .execute();
      }
    }
  });
  return bytes;
}

/** One builder process (bench/search-corpus-child.ts), niced (the machine is shared); resolves to the first session it did not write. */
function buildPart(o: { db: string; root: string; sessions: number; part: number; parts: number; deadline: number }) {
  return new Promise<number>((resolve, reject) => {
    const args = [o.db, o.root, o.sessions, o.part, o.parts, o.deadline].map(String);
    const child = spawn('nice', [process.execPath, '--import', 'tsx', '--conditions=source', CHILD, ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolve((JSON.parse(out) as { next: number }).next)
        : reject(new Error(`corpus builder ${o.part} exited ${code}`)),
    );
  });
}
