// The search bench's corpus: sessions of user messages and replies whose words follow Zipf's law
// over a vocabulary of 30,000 made-up words, as natural text does (a handful of words in every
// message, most words in few), so a query can be common, medium or rare. Deterministic: the same
// sessions, bytes and commit ids on every run.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalJson, type DagNode } from '../../packages/core/src/index.js';
import { openSqlite, type SqlStore } from '../../packages/sqlite/src/index.js';
import { BASE_TIME, mulberry32 } from './conversation.js';
import { timedReconcile } from './small-sessions.js';

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
  /** How long each step of the build took, ms (absent for a corpus reused from disk). */
  build?: { fill: number; backfill: number };
}

/**
 * The corpus in `dir`, built there once (an SQLite DAG filled in one transaction, then
 * `reconcile` on an empty root: what `entity-git sync` runs, one pack per session) and reused by
 * later runs (`corpus.json` records it).
 */
export async function searchCorpus(dir: string, sessions: number, turns: number): Promise<Corpus> {
  const record = join(dir, 'corpus.json');
  if (existsSync(record)) {
    const c = JSON.parse(readFileSync(record, 'utf8')) as Corpus;
    if (c.sessions !== sessions || c.turns !== turns)
      throw new Error(`${dir} holds ${c.sessions} sessions of ${c.turns} turns, not ${sessions} of ${turns}`);
    return { ...c, build: undefined };
  }
  mkdirSync(dir, { recursive: true });
  const db = join(dir, 'dag.db');
  const root = join(dir, 'root');
  const store = await openSqlite({ file: db });
  const t0 = performance.now();
  const messageBytes = await fill(store, sessions, turns);
  const fillMs = performance.now() - t0;
  const backfill = await timedReconcile(store, root);
  const failed = backfill.report.entries.find((e) => e.action !== 'backfilled');
  if (failed) throw new Error(`backfill: ${JSON.stringify(failed)}`);
  await store.close();
  const c: Corpus = {
    dir,
    root,
    db,
    sessions,
    turns,
    messages: sessions * turns * 2,
    messageBytes,
    build: { fill: fillMs, backfill: backfill.ms },
  };
  writeFileSync(record, JSON.stringify(c, null, 2));
  return c;
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
