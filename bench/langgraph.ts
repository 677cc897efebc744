// The LangGraph source: a thread of a real agent on the SQLite checkpointer, read and mirrored.
// Compared in the same run with the floor every reader of it pays, LangGraph's own `list` of the
// thread's checkpoints (each one read and deserialized by the saver).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createLangGraphDag } from '../packages/langgraph/src/index.js';
import { longThread } from '../packages/langgraph/test/helpers/long-thread.js';
import { createNodeMirror } from '../packages/node-fs/src/index.js';
import { align, failWith, fsckOr, git, int, mb, ms, ratio, stats, writeResults } from './lib/measure.js';

const fail = failWith('langgraph');
const THREAD = 'bench';
const REPS = 5;
const NEW_TURNS = 5;
/** Bytes of each reply (a question is a quarter of it). */
const BYTES = 800;
const SIZES = process.argv.includes('--quick') ? [25] : [25, 100];

type Saver = ReturnType<typeof longThread>['saver'];

/** LangGraph's own read: every checkpoint of the thread (the saver deserializes each). */
async function listAll(saver: Saver): Promise<{ ids: string[]; messages: number }> {
  const ids: string[] = [];
  let messages = 0;
  for await (const t of saver.list({ configurable: { thread_id: THREAD, checkpoint_ns: '' } })) {
    ids.push(t.checkpoint.id);
    messages = Math.max(messages, ((t.checkpoint.channel_values.messages as unknown[]) ?? []).length);
  }
  return { ids, messages };
}

/** The checkpoints written since `known`, as the source reads them: newest first, to the first known. */
async function listNew(saver: Saver, known: Set<string>): Promise<number> {
  let n = 0;
  for await (const t of saver.list({ configurable: { thread_id: THREAD, checkpoint_ns: '' } })) {
    if (known.has(t.checkpoint.id)) break;
    known.add(t.checkpoint.id);
    n++;
  }
  return n;
}

async function readAll(saver: Saver): Promise<number> {
  let n = 0;
  for await (const _ of createLangGraphDag({ saver }).nodesAfter(THREAD)) n++;
  return n;
}

function branchesOf(repo: string): string {
  return git(repo, 'for-each-ref', '--format=%(refname:short) %(objectname)', 'refs/heads');
}

async function size(dir: string, turns: number) {
  const file = join(dir, `thread-${turns}.sqlite`);
  const thread = longThread(file, turns + NEW_TURNS, BYTES);
  await thread.run(THREAD, turns);
  const { ids, messages } = await listAll(thread.saver);
  const s = { list: [] as number[], read: [] as number[], backfill: [] as number[] };
  let nodes = 0;
  let repo = '';
  let mirror: ReturnType<typeof createNodeMirror> | null = null;
  for (let rep = 0; rep < REPS; rep++) {
    const l0 = performance.now();
    await listAll(thread.saver);
    s.list.push(performance.now() - l0);
    const r0 = performance.now();
    nodes = await readAll(thread.saver);
    s.read.push(performance.now() - r0);
    mirror = createNodeMirror({
      dag: createLangGraphDag({ saver: thread.saver }),
      root: join(dir, `root-${turns}-${rep}`),
    });
    execFileSync('sync');
    const b0 = performance.now();
    await mirror.sync(THREAD);
    s.backfill.push(performance.now() - b0);
    repo = mirror.repoPath(THREAD);
  }
  if (nodes !== messages) fail(`${nodes} nodes for a thread of ${messages} messages`);
  fsckOr(fail, repo);

  // New turns on the last backfill's mirror: what the source reads of them, and the whole sync.
  const known = new Set(ids);
  const inc = { listNew: [] as number[], sync: [] as number[] };
  for (let t = 0; t < NEW_TURNS; t++) {
    await thread.run(THREAD, 1);
    const k = new Set(known);
    const n0 = performance.now();
    const fresh = await listNew(thread.saver, k);
    inc.listNew.push(performance.now() - n0);
    const s0 = performance.now();
    const result = await mirror!.sync(THREAD);
    inc.sync.push(performance.now() - s0);
    for (const id of k) known.add(id);
    if (fresh === 0 || result.commitsWritten !== 1)
      fail(`turn ${t + 1}: ${fresh} checkpoints, ${result.commitsWritten} commits`);
  }
  fsckOr(fail, repo);
  if (git(repo, 'status', '--porcelain') !== '') fail('git status after the new turns is not empty');
  const fresh = createNodeMirror({
    dag: createLangGraphDag({ saver: thread.saver }),
    root: join(dir, `fresh-${turns}`),
  });
  await fresh.sync(THREAD);
  if (branchesOf(fresh.repoPath(THREAD)) !== branchesOf(repo)) fail('the synced turns differ from a fresh backfill');
  thread.saver.db.close();
  return {
    turns,
    checkpoints: ids.length,
    messages,
    dbBytes: statSync(file).size,
    list: stats(s.list),
    read: stats(s.read),
    backfill: stats(s.backfill),
    listNew: stats(inc.listNew),
    sync: stats(inc.sync),
  };
}

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'entity-git-bench-langgraph-'));
  console.log(
    `langgraph bench: a StateGraph agent (a tool call and a ${BYTES}-byte reply a turn) on SqliteSaver; ${REPS} interleaved reps, then ${NEW_TURNS} new turns each synced`,
  );
  console.log(`node ${process.version}, ${cpus().length} cpus, in ${dir}`);
  const results = [];
  try {
    for (const turns of SIZES) results.push(await size(dir, turns));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log('');
  console.log(
    align([
      [
        'turns',
        'checkpoints',
        'messages',
        'db',
        'list',
        'source read',
        'read/list',
        'backfill',
        'backfill/list',
        'list new',
        'turn sync',
        'sync/list new',
      ],
      ['', '', '', '', 'median ms', 'median ms', '', 'median ms', '', 'median ms', 'median ms', ''],
      ...results.map((r) => [
        int(r.turns),
        int(r.checkpoints),
        int(r.messages),
        mb(r.dbBytes),
        ms(r.list.median),
        ms(r.read.median),
        ratio(r.read.median / r.list.median),
        ms(r.backfill.median),
        ratio(r.backfill.median / r.list.median),
        ms(r.listNew.median),
        ms(r.sync.median),
        ratio(r.sync.median / r.listNew.median),
      ]),
    ]),
  );
  console.log('');
  console.log(
    'list: SqliteSaver.list of every checkpoint (LangGraph reads and deserializes each); source read: a fresh LangGraphDag yielding every node; backfill: a fresh mirror.sync; list new: the saver listing the new turn’s checkpoints (newest first, to the first known); turn sync: mirror.sync of one new turn on a warm source',
  );
  writeResults('langgraph', {
    node: process.version,
    cpus: cpus().length,
    platform: `${process.platform}-${process.arch}`,
    reps: REPS,
    unit: 'ms',
    results,
  });
}
