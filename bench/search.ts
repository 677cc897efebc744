// Search: a query's time over thousands of sessions against git grep and ripgrep over the same
// repositories, in the same run; the index's size against the message JSON; and what the index
// update adds to a turn's sync.
//
//   npm run bench -- search                                      # 200 sessions of 50 turns (~20,000 messages)
//   npm run bench -- search --sessions=10000 --turns=50          # the issue's size (~1,000,000 messages; long)
//
// The corpus (bench/lib/search-corpus.ts) is built once into `--corpus=DIR` (default
// $TMPDIR/entity-git-search-<sessions>x<turns>) and reused by later runs: the DAG's rows, then the
// repositories by `mirror.sync` in `--jobs=N` processes for at most `--build-minutes=M`; the
// sessions left without a repository go into the index through `SearchIndex.apply`
// (bench/lib/search-build.ts), and ripgrep and git grep search the repositories there are.
// `--reindex` builds the index again. `--corpus-only` stops once the corpus is built, `--index-only`
// once the index is (each step can then run niced, and the measures on their own). Each run appends
// turns to 50 sessions (the update's measures), so a corpus grows a little with each run.
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { INDEX_FILE, SearchIndex } from '../packages/search/src/index.js';
import { align, failWith, fsckOr, int, ms, ratio, stats, writeResults } from './lib/measure.js';
import { measureBatching } from './lib/search-batch.js';
import { buildIndex } from './lib/search-build.js';
import { measureUpdateSplit } from './lib/search-split.js';
import { measureUpdates, updateLines } from './lib/search-updates.js';
import { corpusSessionId, hasRepository, searchCorpus, wordOf } from './lib/search-corpus.js';

const fail = failWith('search');
const flag = (name: string, fallback: string): string =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const SESSIONS = Number(flag('sessions', '200'));
const TURNS = Number(flag('turns', '50'));
const REPS = Number(flag('reps', '7'));
const UPDATES = 20;
// Rounds of UPDATES queued updates and a flush: the first of sessions' first syncs, the others of a running mirror's.
const ROUNDS = 5;
const JOBS = Number(flag('jobs', '1'));
const MINUTES = Number(flag('build-minutes', '100000'));
const RG_REPS = Number(flag('rg-reps', '3'));
// git grep in every n-th repository only, its time scaled by n: one process a repository takes minutes at thousands.
const GREP_EVERY = Number(flag('git-grep-every', '1'));

interface Query {
  name: string;
  words: string;
  session?: string;
  role?: 'user';
  allBranches?: boolean;
}

const QUERIES: Query[] = [
  { name: 'most common word', words: wordOf(0) },
  { name: 'rank 100', words: wordOf(100) },
  { name: 'rank 3,000', words: wordOf(3000) },
  { name: 'rank 25,000 (rare)', words: wordOf(25000) },
  { name: 'two words (ranks 20 + 2,000)', words: `${wordOf(20)} ${wordOf(2000)}` },
  { name: 'rank 100, --role user', words: wordOf(100), role: 'user' },
  { name: 'rank 100, --all-branches', words: wordOf(100), allBranches: true },
  { name: 'rank 100, --session', words: wordOf(100), session: corpusSessionId(7) },
];

function ripgrep(root: string, word: string): { ms: number; files: string[] } | null {
  const t0 = performance.now();
  const r = spawnSync('rg', ['-l', '-i', '-w', '-F', word, '-g', '**/messages/**/*.json', root], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  const took = performance.now() - t0;
  if (r.error) return null;
  return { ms: took, files: r.stdout.split('\n').filter(Boolean) };
}

/** git grep of every repository's HEAD, one process a repository: what git offers across repositories. */
function gitGrep(root: string, ids: string[], word: string): { ms: number; matches: number } {
  let matches = 0;
  const t0 = performance.now();
  for (const id of ids) {
    const r = spawnSync('git', ['grep', '-l', '-i', '-w', '-F', '-e', word, 'HEAD', '--', 'messages'], {
      cwd: join(root, id),
      encoding: 'utf8',
    });
    matches += r.stdout.split('\n').filter(Boolean).length;
  }
  return { ms: performance.now() - t0, matches };
}

export async function run(): Promise<void> {
  const dir = flag('corpus', join(tmpdir(), `entity-git-search-${SESSIONS}x${TURNS}`));
  console.log(
    `search bench: ${int(SESSIONS)} sessions of ${TURNS} turns (a user message and a reply of ~330 characters each) in ${dir}`,
  );
  const corpus = await searchCorpus(dir, { sessions: SESSIONS, turns: TURNS, jobs: JOBS, minutes: MINUTES });
  if (corpus.build)
    console.log(
      `corpus built: rows ${corpus.build.fill === null ? '(an earlier run)' : `${(corpus.build.fill / 1000).toFixed(1)} s`}, repositories (mirror.sync of each session, in ${corpus.repositories.jobs} processes) ${(corpus.build.repositories / 1000).toFixed(1)} s`,
    );
  const { root } = corpus;
  if (process.argv.includes('--corpus-only')) return;
  const real = Array.from({ length: SESSIONS }, (_, i) => i).filter((i) => hasRepository(corpus, i));
  const ids = real.map(corpusSessionId);
  console.log(
    `${int(ids.length)} sessions have a repository (${int(ids.length * TURNS * 2)} messages), ${int(SESSIONS - ids.length)} are in the DAG only`,
  );
  for (const id of [ids[0]!, ids.at(-1)!]) fsckOr(fail, join(root, id));
  const indexFile = join(root, INDEX_FILE);
  let rebuild: Awaited<ReturnType<typeof buildIndex>> | null = null;
  if (process.argv.includes('--reindex') || !existsSync(indexFile)) {
    for (const f of [indexFile, `${indexFile}-wal`, `${indexFile}-shm`]) rmSync(f, { force: true });
    const index = new SearchIndex({ root });
    rebuild = await buildIndex(index, corpus);
    index.close();
    const r = rebuild.reindex;
    console.log(
      `index built: reindex of ${int(r.sessions)} repositories, ${int(r.added)} messages in ${(r.ms / 1000).toFixed(1)} s (${((r.ms / r.added) * 1000).toFixed(0)} µs a message); ${int(rebuild.generated.messages)} messages of the sessions without a repository through apply in ${(rebuild.generated.ms / 1000).toFixed(1)} s; compacted again in ${(rebuild.compact.ms / 1000).toFixed(1)} s`,
    );
  }
  if (process.argv.includes('--index-only')) return;
  // Queued updates are applied when the update measure flushes them, not by the timer mid-round.
  const index = new SearchIndex({ root, batchMs: 600_000 });
  const messages = countMessages(indexFile);
  const size = sizeOf(indexFile);
  // The index also holds the turns earlier runs appended (their JSON is the corpus's, a message on average).
  const perMessage = corpus.messageBytes / corpus.messages;
  console.log(
    `index: ${int(messages)} messages, ${(size / 1e6).toFixed(1)} MB, ${(size / messages).toFixed(1)} B a message: ${(size / messages / perMessage).toFixed(3)}x the message JSON (${perMessage.toFixed(1)} B of canonical JSON a message, ${(corpus.messageBytes / 1e6).toFixed(1)} MB in the corpus's ${int(corpus.messages)} files)`,
  );

  // Queries: entity-git (limit 20, a page of hits) and ripgrep over the working trees, interleaved.
  const rows = [
    ['query', 'hits', 'entity-git median', 'p90', 'in a row', 'ripgrep median', 'rg files', 'rg/entity-git'],
  ];
  const results: Record<string, unknown>[] = [];
  const hasRg = ripgrep(root, 'x') !== null;
  if (!hasRg) console.log('ripgrep (rg) is not installed: its column is left out (apt-get install -y ripgrep)');
  for (const q of QUERIES) {
    const eg: number[] = [];
    const rg: number[] = [];
    let hits = 0;
    let rgFiles = 0;
    for (let rep = 0; rep < REPS; rep++) {
      const t0 = performance.now();
      const r = await index.search({
        text: q.words,
        session: q.session,
        role: q.role,
        allBranches: q.allBranches,
        limit: 20,
      });
      eg.push(performance.now() - t0);
      hits = r.hits.length;
      if (hasRg && !q.session && !q.role && rep < RG_REPS) {
        const g = ripgrep(root, q.words.split(' ')[0]!)!;
        rg.push(g.ms);
        rgFiles = g.files.length;
      }
    }
    // The same query again, REPS times in a row: ripgrep's walk of every file between two reps
    // leaves the repositories' packs out of the page cache; here they stay.
    const row: number[] = [];
    for (let rep = 0; rep < REPS; rep++) {
      const t0 = performance.now();
      await index.search({ text: q.words, session: q.session, role: q.role, allBranches: q.allBranches, limit: 20 });
      row.push(performance.now() - t0);
    }
    const e = stats(eg);
    const w = stats(row);
    const g = rg.length > 0 ? stats(rg) : null;
    rows.push([
      q.name,
      String(hits),
      ms(e.median),
      ms(e.p90),
      ms(w.median),
      g ? ms(g.median) : '—',
      g ? int(rgFiles) : '—',
      g ? ratio(g.median / e.median) : '—',
    ]);
    results.push({ ...q, hits, entityGit: e, inARow: w, ripgrep: g, rgFiles });
  }
  console.log(align(rows));
  console.log('(ripgrep lists every file holding the first word; entity-git a page of 20 hits, all words)');

  // Exactness: every message holding the rare word, by the index, equals ripgrep's files.
  const rare = wordOf(25000);
  const all = await index.search({ text: rare, limit: 1000 });
  if (hasRg) {
    const files = ripgrep(root, rare)!.files.map((f) =>
      f
        .split('/')
        .at(-1)!
        .replace(/^\d+-[uats]-/, '')
        .replace(/\.json$/, ''),
    );
    const found = all.hits.filter((h) => ids.includes(h.session)).map((h) => h.node);
    if (JSON.stringify([...files].sort()) !== JSON.stringify([...found].sort()))
      fail(`the index found ${found.length} messages holding ${rare}, ripgrep ${files.length}`);
    console.log(`check: the ${found.length} messages holding "${rare}" are the files ripgrep finds`);
  }

  // git grep, one process a repository, for the rare word, once (it takes a while).
  const grepIds = ids.filter((_, k) => k % GREP_EVERY === 0);
  const grepRows = [
    [
      'query',
      `git grep (${int(grepIds.length)} repositories${GREP_EVERY > 1 ? `, ×${GREP_EVERY}` : ''})`,
      'matches',
      'entity-git median',
      'git grep/entity-git',
    ],
  ];
  const grep: Record<string, unknown>[] = [];
  for (const q of process.argv.includes('--no-git-grep') ? [] : [QUERIES[3]!]) {
    const measured = gitGrep(root, grepIds, q.words);
    const g = { ...measured, repositories: grepIds.length, ms: measured.ms * GREP_EVERY };
    const e = (results.find((r) => r.name === q.name)!.entityGit as { median: number }).median;
    grepRows.push([q.name, `${ms(g.ms)} ms`, int(g.matches), ms(e), ratio(g.ms / e)]);
    grep.push({ query: q.name, ...g });
  }
  console.log(align(grepRows));

  // The same file, its updates recorded on the calling thread: the contender of the write thread,
  // and what the loop and the split below measure (the transaction's own cost).
  const calling = new SearchIndex({ root, batchMs: 600_000, writeThread: false });
  const update = await measureUpdates({
    db: corpus.db,
    root,
    indexes: { thread: index, calling },
    session: (k) => real[Math.floor(((k + 0.5) * real.length) / (5 * UPDATES))]!,
    size: UPDATES,
    rounds: ROUNDS,
    fail,
  });
  for (const line of updateLines(update, UPDATES, ROUNDS)) console.log(line);
  // Sessions without a repository (none of them synced above): a turn each, alone or batched.
  const generated = Array.from({ length: SESSIONS }, (_, i) => i).filter((i) => !hasRepository(corpus, i));
  const batching = await measureBatching(
    calling,
    generated.filter((_, k) => k % Math.ceil(generated.length / 240) === 0),
    { size: UPDATES, reps: 6, file: indexFile },
  );
  console.log(
    `the index update alone, ${UPDATES} turns at a time, 6 times: its own transaction each ${ms(batching.alone.median)} ms median, mean ${ms(batching.alone.mean)} ms; batched (${UPDATES} a flush) ${ms(batching.batched.median)} ms median, mean ${ms(batching.batched.mean)} ms a turn (${ratio(batching.batched.mean / batching.alone.mean)} of its own transaction's mean); its own transaction after 8 MB touched and 50,000 objects made (as a sync leaves the caches and heap), alternating with the plain ones: ${ms(batching.afterSweep.median)} ms median, mean ${ms(batching.afterSweep.mean)} ms (${ratio(batching.afterSweep.median / batching.alone.median)} of the plain median)`,
  );
  const split = await measureUpdateSplit(
    corpus.db,
    root,
    calling,
    real.filter((_, k) => k % Math.ceil(real.length / 10) === 1),
  );
  console.log(
    `the update split (a running mirror): sync ${ms(split.sync.median)} ms median, reading what it wrote ${ms(split.read.median)} ms (${ratio(split.read.median / split.sync.median)}), the transaction ${ms(split.write.median)} ms (${ratio(split.write.median / split.sync.median)})`,
  );
  index.close();
  calling.close();
  const live = sizeOf(indexFile);
  const liveMessages = countMessages(indexFile);
  console.log(
    `index after this run's updates: ${int(liveMessages)} messages, ${(live / 1e6).toFixed(1)} MB, ${(live / liveMessages).toFixed(1)} B a message: ${(live / liveMessages / perMessage).toFixed(3)}x the message JSON`,
  );
  writeResults('search', {
    live: { bytes: live, messages: liveMessages },
    split,
    batching,
    sessions: SESSIONS,
    turns: TURNS,
    corpus,
    rebuild,
    indexBytes: size,
    messages,
    queries: results,
    gitGrep: grep,
    update,
  });
}

function countMessages(file: string): number {
  const r = spawnSync('sqlite3', [file, 'SELECT count(*) FROM docs'], { encoding: 'utf8' });
  return r.status === 0 ? Number(r.stdout.trim()) : Number.NaN;
}

/** The index on disk: its file after a checkpoint, plus what WAL and shared memory hold. */
function sizeOf(file: string): number {
  spawnSync('sqlite3', [file, 'PRAGMA wal_checkpoint(TRUNCATE)'], { encoding: 'utf8' });
  return [file, `${file}-wal`, `${file}-shm`].reduce((n, f) => n + (existsSync(f) ? statSync(f).size : 0), 0);
}
