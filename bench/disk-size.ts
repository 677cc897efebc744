// Disk of a session repository at any size (issue 22): "≤ 3× its message bytes + 32 KB", the whole
// session directory (objects, refs, index, config, working tree, entity-git's state). Sessions of
// 3, 30, 300 and 3,000 turns (a user message and a reply of ~330 characters each, as the
// many-sessions bench writes them), each made three ways:
//
// - `backfill`: one sync of the whole session (a database mirrored for the first time);
// - `turns, js packer`: a sync after every turn, and the service's packer asked after each as the
//   mirror service asks it (core's `packSession`: no git needed; the browser's packer);
// - `turns, native packer`: the same with Node's default packer (`git repack` when git is there);
//
// and, beside them, native git holding the same commits: `git fast-import` of the backfilled
// repository's `fast-export` and `git reset --hard` (the working tree), then `git gc`.
// Bytes are `du -sb` (apparent sizes; a directory counts its own size, 4 KB on ext4, ~100 bytes on
// tmpfs) and blocks `du -sk`; the file system is the one TMPDIR is on.
//
// `--turns=3,30,300,3000` (comma-separated), `--keep` keeps the directories.
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalJson, createPacker, type DagNode, MemoryDag, type Packer } from '../packages/core/src/index.js';
import { createNodeMirror, createNodePacker, nodeStorage } from '../packages/node-fs/src/index.js';
import { BASE_TIME, replyTurns } from './lib/conversation.js';
import { align, failWith, fsckOr, git, int, writeResults } from './lib/measure.js';

const fail = failWith('disk-size');
const given = process.argv.find((a) => a.startsWith('--turns='));
const SIZES = (given?.slice('--turns='.length) ?? '3,30,300,3000').split(',').map(Number);
const SESSION = 's';

/** A session of `turns` turns: a user message and a reply of ~330 characters each. */
function sessionNodes(turns: number): DagNode[] {
  return replyTurns(SESSION, 0x5e55 + turns, turns);
}

const du = (flag: string, dir: string) => Number(execFileSync('du', [flag, dir], { encoding: 'utf8' }).split('\t')[0]);

/** Apparent bytes of the files under `dir`, by what they are. */
function breakdown(dir: string): Record<'tree' | 'objects' | 'index' | 'state' | 'other', number> {
  const out = { tree: 0, objects: 0, index: 0, state: 0, other: 0 };
  const walk = (at: string, rel: string) => {
    for (const e of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, e.name);
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) walk(path, r);
      else {
        const size = lstatSync(path).size;
        if (!r.startsWith('.git/')) out.tree += size;
        else if (r.startsWith('.git/objects/')) out.objects += size;
        else if (r === '.git/index' || r.startsWith('.git/sharedindex.')) out.index += size;
        else if (r.startsWith('.git/entity-git')) out.state += size;
        else out.other += size;
      }
    }
  };
  walk(dir, '');
  return out;
}

interface Row {
  turns: number;
  history: string;
  messageBytes: number;
  bytes: number;
  blocks: number;
  goal: number;
  parts: ReturnType<typeof breakdown>;
}

async function make(root: string, nodes: DagNode[], history: 'backfill' | 'js' | 'native'): Promise<string> {
  const dag = new MemoryDag();
  await dag.createSession({ id: SESSION, title: 'Disk', created_at: BASE_TIME });
  const mirror = createNodeMirror({ dag, root });
  const gitdir = join(mirror.repoPath(SESSION), '.git');
  if (history === 'backfill') {
    for (const n of nodes) await dag.addNode(n);
    await mirror.sync(SESSION);
    return mirror.repoPath(SESSION);
  }
  const packer: Packer =
    history === 'native' ? createNodePacker({ engine: 'native' }) : createPacker({ storage: nodeStorage() });
  for (const n of nodes) {
    await dag.addNode(n);
    if (n.role !== 'assistant') continue;
    await mirror.sync(SESSION);
    // What the service does after a turn's commit, the wait for quiet left out.
    await packer.packNow(gitdir);
  }
  return mirror.repoPath(SESSION);
}

export async function run(): Promise<void> {
  const keep = process.argv.includes('--keep');
  const dir = mkdtempSync(join(tmpdir(), 'entity-git-bench-disk-'));
  const fsType = execFileSync('stat', ['-f', '-c', '%T', dir], { encoding: 'utf8' }).trim();
  console.log(`disk-size bench: sessions of ${SIZES.join(', ')} turns, in ${dir} (${fsType})`);
  const rows: Row[] = [];
  for (const turns of SIZES) {
    const nodes = sessionNodes(turns);
    const messageBytes = nodes.reduce((sum, n) => sum + Buffer.byteLength(canonicalJson(n)), 0);
    const goal = 3 * messageBytes + 32 * 1024;
    const measure = (history: string, repo: string) => {
      fsckOr(fail, repo);
      if (git(repo, 'status', '--porcelain') !== '') fail(`${history}, ${turns} turns: git status is not clean`);
      rows.push({
        turns,
        history,
        messageBytes,
        bytes: du('-sb', repo),
        blocks: du('-sk', repo) * 1024,
        goal,
        parts: breakdown(repo),
      });
    };
    let backfilled = '';
    for (const history of ['backfill', 'js', 'native'] as const) {
      const repo = await make(join(dir, `${history}-${turns}`), nodes, history);
      measure(history === 'backfill' ? 'backfill' : `turns, ${history} packer`, repo);
      if (history === 'backfill') backfilled = repo;
    }
    // Native git, the same commits.
    const native = join(dir, `git-${turns}`);
    execFileSync('git', ['init', '-q', '-b', 'main', native]);
    const stream = execFileSync('git', ['fast-export', '--all'], { cwd: backfilled, maxBuffer: 1 << 28 });
    execFileSync('git', ['fast-import', '--quiet'], { cwd: native, input: stream, maxBuffer: 1 << 28 });
    execFileSync('git', ['reset', '-q', '--hard', 'main'], { cwd: native });
    if (git(native, 'rev-parse', 'HEAD') !== git(backfilled, 'rev-parse', 'HEAD')) fail('native: another HEAD');
    execFileSync('git', ['gc', '-q'], { cwd: native });
    measure('native git (fast-import, gc)', native);
  }
  const kb = (x: number) => `${(x / 1024).toFixed(1)} KB`;
  console.log(
    align([
      [
        'turns',
        'history',
        'messages',
        'goal',
        'bytes',
        'vs goal',
        'blocks',
        'work tree',
        'objects',
        'index',
        'state',
        'other',
      ],
      ...rows.map((r) => [
        int(r.turns),
        r.history,
        kb(r.messageBytes),
        kb(r.goal),
        kb(r.bytes),
        `${(r.bytes / r.goal).toFixed(2)}x`,
        kb(r.blocks),
        kb(r.parts.tree),
        kb(r.parts.objects),
        kb(r.parts.index),
        kb(r.parts.state),
        kb(r.parts.other),
      ]),
    ]),
  );
  console.log('goal: bytes ≤ 3 × messages + 32 KB (vs goal ≤ 1.00x)');
  writeResults('disk-size', { fsType, rows });
  if (!keep) rmSync(dir, { recursive: true, force: true });
}
