// The page bench/browser.ts drives in Chromium: per-turn cost on IndexedDB of entity-git's
// browser mirror (LightningFS, flush before every ref move, Web Locks) against isomorphic-git's
// own `add` + `commit` on a LightningFS working tree holding the same files. The two are
// interleaved turn by turn in one page; every figure is from this page's `performance.now()`.
import LightningFS from '@isomorphic-git/lightning-fs';
import { Buffer } from 'buffer';
import git from 'isomorphic-git';
import { MemoryDag, canonicalJson, messageFileName, type DagNode } from '../../packages/core/src/index.ts';
import { parseCommit } from '../../packages/git/src/index.ts';
import { createBrowserMirror } from '../../packages/browser-fs/src/index.ts';
import { BASE_TIME, Conversation, TURN_FILES } from '../lib/conversation.ts';

// isomorphic-git calls Node's Buffer, which a browser lacks (the library installs it only when it
// loads isomorphic-git itself, for a remote); this page calls isomorphic-git directly.
(globalThis as { Buffer?: unknown }).Buffer ??= Buffer;

const SID = 'bench';
const AUTHOR = { name: 'entity-git', email: 'entity-git@localhost' };
/** Turns after the timed ones whose file-system calls are counted (outside the comparison). */
const COUNTED = 5;

export interface BrowserBenchResult {
  messagesStart: number;
  messagesEnd: number;
  backfillMs: number;
  isoPrefillMs: number;
  entityGit: number[];
  isoAdd: number[];
  isoCommit: number[];
  /** Per file-system operation over the counted turns after the timed ones: calls and milliseconds, divided by the turns. */
  opsPerTurn: Record<string, { calls: number; ms: number }>;
  /** Root tree ids of the last commit, entity-git's and isomorphic-git's: equal when both hold the same files. */
  trees: [string, string];
  userAgent: string;
}

async function run(o: {
  history: number;
  warmup: number;
  timed: number;
  only?: 'entity-git';
}): Promise<BrowserBenchResult> {
  const tag = `${Date.now().toString(36)}-${Math.floor(Math.random() * 1e9).toString(36)}`;
  const dag = new MemoryDag();
  await dag.createSession({ id: SID, title: 'browser bench', created_at: BASE_TIME });
  const conv = new Conversation(SID, 0xb40e);
  const history: DagNode[] = [];
  for (let i = 0; i < o.history / TURN_FILES; i++) history.push(...conv.turn());
  for (const n of history) await dag.addNode(n);

  // entity-git: the browser mirror, backfilled (untimed per turn, printed for information).
  const mirror = createBrowserMirror({ dag, fsName: `bench-eg-${tag}` });
  let t = performance.now();
  await mirror.sync(SID);
  const backfillMs = performance.now() - t;
  const tip = (await mirror.branches(SID)).find((b) => b.head)!.commit;
  const meta = canonicalJson((await mirror.read(SID, tip)).meta as never);

  // isomorphic-git: a working tree with the same meta.json and message files, added and committed once.
  const fs = new LightningFS(`bench-iso-${tag}`, { wipe: true });
  const pfs = fs.promises;
  const dir = '/repo';
  const cache = {};
  await git.init({ fs, dir, defaultBranch: 'main' });
  await pfs.mkdir(`${dir}/messages`);
  await pfs.writeFile(`${dir}/meta.json`, meta, 'utf8');
  t = performance.now();
  if (o.only !== 'entity-git')
    for (const n of history) await pfs.writeFile(`${dir}/messages/${messageFileName(n)}`, canonicalJson(n), 'utf8');
  await git.add({ fs, dir, filepath: '.', cache });
  let when = BASE_TIME;
  const sig = () => ({ ...AUTHOR, timestamp: when, timezoneOffset: 0 });
  await git.commit({ fs, dir, message: 'history', author: sig(), committer: sig(), cache });
  const isoPrefillMs = performance.now() - t;

  const isoTurn = async (turn: DagNode[], k: number): Promise<[number, number]> => {
    // isomorphic-git: the files are in the working tree (untimed), then add + commit.
    const paths = turn.map((n) => `messages/${messageFileName(n)}`);
    for (let i = 0; i < turn.length; i++) await pfs.writeFile(`${dir}/${paths[i]}`, canonicalJson(turn[i]!), 'utf8');
    when = turn.at(-1)!.created_at;
    const t0 = performance.now();
    await git.add({ fs, dir, filepath: paths, cache });
    const added = performance.now();
    await git.commit({ fs, dir, message: `turn ${k}`, author: sig(), committer: sig(), cache });
    return [added - t0, performance.now() - added];
  };

  const entityGit: number[] = [];
  const isoAdd: number[] = [];
  const isoCommit: number[] = [];
  let last: DagNode[] = [];
  for (let k = 0; k < o.warmup + o.timed; k++) {
    if (k === o.warmup) await (globalThis as { onTimed?: () => Promise<void> }).onTimed?.();
    const turn = conv.turn();
    last = turn;
    // entity-git: the nodes are in the DAG (untimed), then one sync.
    for (const n of turn) await dag.addNode(n);
    t = performance.now();
    await mirror.sync(SID);
    const eg = performance.now() - t;
    if (o.only === 'entity-git') {
      if (k >= o.warmup) entityGit.push(eg);
      continue;
    }
    const [add, commit] = await isoTurn(turn, k);
    if (k >= o.warmup) {
      entityGit.push(eg);
      isoAdd.push(add);
      isoCommit.push(commit);
    }
  }

  // What a turn's sync asks of the file system, for the notes: calls and time per operation over
  // a few more turns after the timed ones, the file system's calls wrapped only now. With
  // `tracePaths` set, the last of them is printed as a timeline.
  const ops: Record<string, { calls: number; ms: number }> = {};
  const g = globalThis as { tracePaths?: boolean; timeline?: string[]; syncStart?: number };
  const wrap = (target: Record<string, unknown>, name: string) => {
    const inner = target[name] as (...a: unknown[]) => Promise<unknown>;
    if (typeof inner !== 'function') return;
    target[name] = async (...a: unknown[]) => {
      const t0 = performance.now();
      if (g.timeline) g.timeline.push(`${(t0 - g.syncStart!).toFixed(2)} start ${name} ${String(a[0]).slice(-40)}`);
      try {
        return await inner.apply(target, a);
      } finally {
        const op = (ops[name] ??= { calls: 0, ms: 0 });
        op.calls++;
        op.ms += performance.now() - t0;
        if (g.timeline)
          g.timeline.push(`${(performance.now() - g.syncStart!).toFixed(2)} end ${name} ${String(a[0]).slice(-40)}`);
      }
    };
  };
  for (const name of ['readFile', 'writeFile', 'unlink', 'readdir', 'mkdir', 'rmdir', 'stat', 'lstat', 'rename'])
    wrap(mirror.storage.fs as never, name);
  wrap(mirror.storage.lightningFs.promises as never, 'flush');
  for (let k = 0; k < COUNTED; k++) {
    const turn = conv.turn();
    last = turn;
    for (const n of turn) await dag.addNode(n);
    t = performance.now();
    if (g.tracePaths && k === COUNTED - 1) {
      g.timeline = [];
      g.syncStart = t;
    }
    await mirror.sync(SID);
    if (g.timeline) {
      console.log(`TL ${g.timeline.join('\nTL ')}\nTL ${(performance.now() - t).toFixed(2)} done`);
      g.timeline = undefined;
    }
    if (o.only !== 'entity-git') await isoTurn(turn, o.warmup + o.timed + k);
  }

  // Both hold the same files at the end: the same root tree.
  const egTip = (await mirror.branches(SID)).find((b) => b.head)!.commit;
  const egView = await mirror.read(SID, egTip);
  if (egView.messages.at(-1)?.id !== last.at(-1)!.id) throw new Error('the mirror does not end on the last turn');
  const egTree = parseCommit(await readRaw(mirror.storage.fs, `${mirror.repoPath(SID)}/.git`, egTip)).tree;
  if (o.only === 'entity-git')
    return {
      messagesStart: history.length,
      messagesEnd: 0,
      backfillMs,
      isoPrefillMs,
      opsPerTurn: {},
      entityGit,
      isoAdd,
      isoCommit,
      trees: [egTree, egTree],
      userAgent: '',
    };
  const isoTree = (await git.readCommit({ fs, dir, oid: await git.resolveRef({ fs, dir, ref: 'HEAD' }) })).commit.tree;
  return {
    messagesStart: history.length,
    messagesEnd: history.length + (o.warmup + o.timed + COUNTED) * TURN_FILES,
    backfillMs,
    isoPrefillMs,
    opsPerTurn: Object.fromEntries(
      Object.entries(ops).map(([k, v]) => [k, { calls: v.calls / COUNTED, ms: v.ms / COUNTED }]),
    ),
    entityGit,
    isoAdd,
    isoCommit,
    trees: [egTree, isoTree],
    userAgent: navigator.userAgent,
  };
}

/** A commit's bytes from the entity-git repository, read with isomorphic-git (loose or packed). */
async function readRaw(fs: unknown, gitdir: string, oid: string): Promise<Uint8Array> {
  const r = await git.readObject({ fs: fs as never, gitdir, oid, format: 'content' });
  return r.object as Uint8Array;
}

(globalThis as { bench?: unknown }).bench = { run };
document.title = 'ready';
