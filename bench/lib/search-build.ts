// The search bench's index at the corpus's full size. Sessions with a repository are indexed by
// `reindex` (from the repositories alone, timed: the rebuild's row); the sessions the build had no
// time to write a repository for go in through `SearchIndex.apply` — the same transaction and
// tables a sync's update writes — fed with what `readRepositoryChanges` would read from their
// repository: every message of the session on `main`, its search text, its turn. Their ids are
// derived, not read: the blob id is git's id of the message's canonical JSON, the commit id a hash
// of the session and turn (no commit exists), so a hit on them names a commit nobody can open.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { canonicalJsonBytes, searchText, sessionDirName, type PlacedMessage } from '../../packages/core/src/index.js';
import type { SearchIndex } from '../../packages/search/src/index.js';
import { corpusNodes, corpusSessionId, hasRepository, type Corpus } from './search-corpus.js';

const sha1 = (b: Uint8Array | string) => createHash('sha1').update(b).digest('hex');

/** The changes a reader of session `i`'s repository would find: one branch, `main`, every message. */
export function generatedChanges(i: number, turns: number) {
  const id = corpusSessionId(i);
  const commits = Array.from({ length: turns }, (_, t) => sha1(`${id} turn ${t + 1}`));
  const messages: PlacedMessage[] = corpusNodes(i, turns).map((node) => ({
    blob: sha1(canonicalJsonBytes(node, (size) => `blob ${size}\0`)),
    node,
    text: searchText(node),
    turn: Math.ceil(node.seq / 2),
    commit: commits[Math.ceil(node.seq / 2) - 1]!,
  }));
  const tip = commits.at(-1)!;
  return {
    session: id,
    head: 'main',
    changed: [{ name: 'main', tip, mode: 'replace' as const, messages }],
    gone: [],
    tips: new Map([['main', tip]]),
  };
}

/** Fills an empty index: `reindex` over the repositories, then `apply` for the sessions without one. */
export async function buildIndex(index: SearchIndex, corpus: Corpus) {
  const t0 = performance.now();
  const rebuilt = await index.reindex();
  const reindexMs = performance.now() - t0;
  const t1 = performance.now();
  let generated = 0;
  for (let i = 0; i < corpus.sessions; i++) {
    if (hasRepository(corpus, i)) continue;
    generated += index.apply(
      join(corpus.root, sessionDirName(corpusSessionId(i))),
      generatedChanges(i, corpus.turns),
    ).added;
  }
  // A rebuild ends compacted; what went in after `reindex` is compacted as it would have been by it.
  const t2 = performance.now();
  index.compact();
  return {
    reindex: { ms: reindexMs, ...rebuilt },
    generated: { ms: t2 - t1, messages: generated },
    compact: { ms: performance.now() - t2 },
  };
}
