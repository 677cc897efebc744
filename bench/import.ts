// Import (issue 21): a 5,000-record Claude Code transcript on disk mirrored from nothing —
// `importTranscripts` reading, parsing and syncing it into an empty root — against
// `git fast-import` writing the very same commits (same trees, author, committer, times and
// messages, so the same commit ids). Interleaved rep by rep. The transcript is synthetic
// (packages/transcripts/test/claude-fixture.ts): turns of one prompt, a response split over
// records with 1–4 parallel tool calls, their results (1–3 KB each), the final reply.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { canonicalJson, derive, messageFileName, nodeFacts } from '../packages/core/src/index.js';
import { createNodeMirror } from '../packages/node-fs/src/index.js';
import { parseTranscript, syncTranscript, TranscriptDag } from '../packages/transcripts/src/index.js';
import { importTranscripts, TranscriptFile } from '../packages/transcripts/src/node/index.js';
import { ClaudeTranscript } from '../packages/transcripts/test/claude-fixture.js';
import { align, failWith, fsckOr, git, int, mb, ratio, stats, writeResults } from './lib/measure.js';
import { fastImport } from './lib/fast-import.js';

const RECORDS = Number(process.env.IMPORT_BENCH_RECORDS ?? 5000);
const REPS = Math.max(1, Number(process.env.IMPORT_BENCH_REPS ?? 3));
const SESSION = 'bench0000-0000-4000-8000-000000005000';

const fail: (message: string) => never = failWith('import');

/** A deterministic transcript of at least `records` records (xorshift text, fixed clock). */
export function transcriptForBench(records: number): Uint8Array {
  const t = new ClaudeTranscript(SESSION);
  let seed = 0x5eed;
  const rand = () => (((seed ^= seed << 13), (seed ^= seed >>> 17), (seed ^= seed << 5)) >>> 0) / 2 ** 32;
  const text = (n: number) =>
    Array.from({ length: n }, () => 'lorem ipsum dolor sit amet consectetur '.split(' ')[Math.floor(rand() * 6)]).join(
      ' ',
    );
  const tools = ['Read', 'Grep', 'Glob', 'Bash', 'Edit'];
  let at = t.user('start the task', null);
  for (let turn = 1; t.records.length < records; turn++) {
    const calls = Array.from({ length: 1 + Math.floor(rand() * 4) }, () => tools[Math.floor(rand() * tools.length)]!);
    const r = t.response(at, [
      { thinking: text(20) },
      { text: text(15) },
      ...calls.map((c) => ({ tool: c, input: { arg: text(3) } })),
    ]);
    let last = r.last;
    r.tools.forEach((id, i) => {
      last = t.result(id, r.records[2 + i]!, text(200 + Math.floor(rand() * 300)));
    });
    const reply = t.response(last, [{ text: text(40) }], { stop: 'end_turn' });
    at = t.user(`turn ${turn + 1}: ${text(12)}`, reply.last);
    if (turn % 7 === 0) t.bookkeeping('file-history-snapshot');
  }
  const end = t.response(at, [{ text: 'done' }], { stop: 'end_turn' });
  t.system('turn_duration', end.last);
  return t.bytes();
}

/** The fast-import stream of main: each commit adds its turn's message files (meta.json in the first). */
function fastImportStream(bytes: Uint8Array, repo: string): { stream: Buffer; commits: number } {
  const [parsed] = parseTranscript(bytes, 'claude-code', SESSION).sessions;
  const d = derive(
    parsed!.nodes.map((n) => nodeFacts(n)),
    parsed!.session.head,
  );
  const main = d.branches.find((b) => b.name === 'main')!;
  if (d.branches.length !== 1) fail(`the transcript has ${d.branches.length} branches, expected main alone`);
  const byId = new Map(parsed!.nodes.map((n) => [n.id, n]));
  const shas = git(repo, 'rev-list', '--reverse', 'refs/heads/main').trim().split('\n');
  if (shas.length !== main.complete) fail(`main has ${shas.length} commits, the DAG ${main.complete} complete turns`);
  const meta = execFileSync('git', ['cat-file', 'blob', `${shas[0]}:meta.json`], { cwd: repo });
  const chunks: Buffer[] = [];
  const data = (b: Buffer) => {
    chunks.push(Buffer.from(`data ${b.length}\n`), b, Buffer.from('\n'));
  };
  shas.forEach((sha, i) => {
    const raw = execFileSync('git', ['cat-file', 'commit', sha], { cwd: repo });
    const split = raw.indexOf('\n\n');
    const headers = raw.subarray(0, split).toString('utf8').split('\n');
    const line = (k: string) => headers.find((h) => h.startsWith(`${k} `))!.slice(k.length + 1);
    chunks.push(
      Buffer.from(`commit refs/heads/main\nmark :${i + 1}\nauthor ${line('author')}\ncommitter ${line('committer')}\n`),
    );
    data(raw.subarray(split + 2));
    if (i > 0) chunks.push(Buffer.from(`from :${i}\n`));
    else {
      chunks.push(Buffer.from('M 100644 inline meta.json\n'));
      data(meta);
    }
    for (const n of main.turns[i]!.nodes) {
      chunks.push(Buffer.from(`M 100644 inline messages/${messageFileName(byId.get(n.id)!)}\n`));
      data(Buffer.from(canonicalJson(byId.get(n.id)!)));
    }
    chunks.push(Buffer.from('\n'));
  });
  chunks.push(Buffer.from('done\n'));
  return { stream: Buffer.concat(chunks), commits: shas.length };
}

const sec = (x: number) => `${(x / 1000).toFixed(2)} s`;

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'entity-git-bench-import-'));
  const gitVersion = execFileSync('git', ['--version'], { encoding: 'utf8' }).trim();
  const bytes = transcriptForBench(RECORDS);
  const file = join(dir, `${SESSION}.jsonl`);
  writeFileSync(file, bytes);
  const lines = bytes.reduce((n, b) => n + (b === 10 ? 1 : 0), 0);
  console.log(
    `import bench: a ${int(lines)}-record Claude Code transcript (${mb(bytes.length)}) imported from nothing, ${REPS} interleaved reps of entity-git / fast-import`,
  );
  console.log(`node ${process.version}, ${gitVersion}, ${cpus().length} cpus, in ${dir}`);
  const s = { entityGit: [] as number[], fastImport: [] as number[], checkout: [] as number[] };
  // A second run over the same root (another process: a mirror of its own), nothing changed.
  const again = { sync: [] as number[], reread: [] as number[], status: [] as number[] };
  let reference: { shas: string[]; tree: string } | null = null;
  let stream: Buffer = Buffer.alloc(0);
  let commits = 0;
  let nodes = 0;
  try {
    for (let rep = 0; rep < REPS; rep++) {
      const root = join(dir, `root-${rep}`);
      const dag = new TranscriptDag();
      const mirror = createNodeMirror({ dag, root });
      // What the last rep (or anything before the bench) wrote goes to disk first, untimed.
      execFileSync('sync');
      const e0 = performance.now();
      const report = await importTranscripts({ files: [new TranscriptFile(file, 'claude-code')], dag, mirror });
      s.entityGit.push(performance.now() - e0);
      if (report.failures.length > 0 || report.entries.length !== 1)
        fail(`import reported ${report.failures.length} failures, ${report.entries.length} sessions`);
      nodes = report.entries[0]!.nodes;
      const repo = mirror.repoPath(SESSION);
      const parsed = dag.get(SESSION)!;
      // Alternately first: the one run second finds the repository's files in the page cache.
      const timed = async <T>(into: number[], f: () => Promise<T>): Promise<T> => {
        const t0 = performance.now();
        const out = await f();
        into.push(performance.now() - t0);
        return out;
      };
      const plainSync = () => timed(again.sync, () => createNodeMirror({ dag, root }).sync(SESSION));
      const rereadSync = () => timed(again.reread, () => syncTranscript(createNodeMirror({ dag, root }), parsed));
      const [plain, reread] =
        rep % 2 === 0
          ? [await plainSync(), await rereadSync()]
          : await rereadSync().then(async (r) => [await plainSync(), r] as const);
      if (!plain.noop || !reread.noop) fail('a second sync of the unchanged transcript wrote something');
      const g0 = performance.now();
      git(repo, 'status', '--porcelain');
      again.status.push(performance.now() - g0);
      if (reference === null) {
        fsckOr(fail, repo);
        if (git(repo, 'status', '--porcelain') !== '') fail('git status after the import is not empty');
        ({ stream, commits } = fastImportStream(bytes, repo));
        reference = {
          shas: git(repo, 'rev-list', '--reverse', 'refs/heads/main').trim().split('\n'),
          tree: git(repo, 'rev-parse', 'main^{tree}').trim(),
        };
      } else if (git(repo, 'rev-parse', 'main').trim() !== reference.shas.at(-1)) {
        fail(`rep ${rep}: the tip differs from rep 0's`);
      }
      const fi = join(dir, `fast-import-${rep}`);
      git(dir, 'init', '-q', '-b', 'main', fi);
      execFileSync('sync');
      const f0 = performance.now();
      await fastImport(fi, stream);
      s.fastImport.push(performance.now() - f0);
      const c0 = performance.now();
      git(fi, 'reset', '--hard', '-q');
      s.checkout.push(performance.now() - c0);
      const fiShas = git(fi, 'rev-list', '--reverse', 'refs/heads/main').trim().split('\n');
      const differs = fiShas.findIndex((sha, i) => sha !== reference!.shas[i]);
      if (fiShas.length !== reference.shas.length || differs >= 0)
        fail(`fast-import's commit ${differs + 1} is ${fiShas[differs]}, entity-git's ${reference.shas[differs]}`);
      if (rep === 0) fsckOr(fail, fi);
      // Each rep's repositories stay until the end. On ext4 without a journal (the 2-CPU VM's),
      // creating a file near thousands deleted in the last minutes costs ~0.5 ms of kernel time
      // (perf: the inode allocator skips recently deleted inodes one by one), so deleting rep N's
      // working trees slowed rep N+1's, entity-git's 3,005 files far more than fast-import's pack.
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const e = stats(s.entityGit);
  const f = stats(s.fastImport);
  const c = stats(s.checkout);
  console.log('');
  console.log(
    align([
      [
        'records',
        'messages',
        'commits',
        'entity-git import',
        'fast-import',
        '+ checkout',
        'entity-git/fast-import',
        'entity-git/(fast-import+checkout)',
      ],
      ['', '', '', 'median / max', 'median / max', 'median', '(medians)', '(medians)'],
      [
        int(lines),
        int(nodes),
        int(commits),
        `${sec(e.median)} / ${sec(e.max)}`,
        `${sec(f.median)} / ${sec(f.max)}`,
        sec(c.median),
        ratio(e.median / f.median),
        ratio(e.median / (f.median + c.median)),
      ],
    ]),
  );
  console.log('');
  console.log(
    'entity-git import: read + parse + mirror.sync from an empty root (working tree and index included); fast-import: the same commit ids, stream built untimed; goal ≤ 1x',
  );
  const as = stats(again.sync);
  const ar = stats(again.reread);
  const ag = stats(again.status);
  const msec = (x: number) => `${x.toFixed(0)} ms`;
  console.log('');
  console.log(
    align([
      [
        'second run, unchanged',
        'mirror.sync',
        'syncTranscript (tips read again)',
        'git status',
        'reread/sync',
        'reread/git status',
      ],
      ['', 'median / max', 'median / max', 'median', '(medians)', '(medians)'],
      [
        `${int(nodes)} messages`,
        `${msec(as.median)} / ${msec(as.max)}`,
        `${msec(ar.median)} / ${msec(ar.max)}`,
        msec(ag.median),
        ratio(ar.median / as.median),
        ratio(ar.median / ag.median),
      ],
    ]),
  );
  console.log(
    'each with a mirror of its own (state read from disk): what the next `entity-git import` costs per session',
  );
  writeResults('import', {
    node: process.version,
    git: gitVersion,
    cpus: cpus().length,
    platform: `${process.platform}-${process.arch}`,
    records: lines,
    messages: nodes,
    commits,
    transcriptBytes: bytes.length,
    reps: REPS,
    unit: 'ms per import',
    entityGit: e,
    fastImport: f,
    checkout: c,
    secondRun: { sync: as, reread: ar, gitStatus: ag },
    ratios: {
      rereadOverSync: ar.median / as.median,
      entityGitOverFastImport: e.median / f.median,
      entityGitOverFastImportAndCheckout: e.median / (f.median + c.median),
    },
  });
}
