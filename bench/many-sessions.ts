// Many sessions: thousands of small sessions in one SQLite database and one root, as a
// person's year of agent use leaves them. Measures what the CLI does with them — the backfill
// (`entity-git sync` on an empty root: reconcile), the start-up check with nothing changed
// (`entity-git sync` / `verify`: the change-marker fast path) and with 1% changed, the full check
// (`--full`) — the disk per session against native git holding the same commits (git init +
// fast-import + checkout, in the same run), the peak RSS, and the per-turn cost of one session
// syncing beside thousands of idle ones.
//
// `--sessions=N` (default 200; the figure is 10,000), `--native=M` (native git on the first
// M sessions, default all up to 1,000: three processes a session), `--keep` keeps the directories.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createNodeMirror } from '../packages/node-fs/src/index.js';
import { openSqlite, type SqlStore } from '../packages/sqlite/src/index.js';
import { failWith, fsckOr, git, int, ratio, stats, writeResults } from './lib/measure.js';
import { fillSessions, sessionId, sessionNodes, timedReconcile } from './lib/small-sessions.js';

const fail = failWith('many-sessions');
const flag = (name: string, fallback: number): number => {
  const given = process.argv.find((a) => a.startsWith(`--${name}=`));
  return given === undefined ? fallback : Number(given.slice(name.length + 3));
};
const SESSIONS = flag('sessions', 200);
const NATIVE = Math.min(SESSIONS, flag('native', 1000));
const TURNS = 3;
const ONE_ROOT_TURNS = 20;
const fill = (store: SqlStore) => fillSessions(store.db, SESSIONS, TURNS);
const du = (args: string[], dir: string) =>
  Number(spawnSync('du', [...args, dir], { encoding: 'utf8' }).stdout.split('\t')[0]);

export async function run(): Promise<void> {
  const keep = process.argv.includes('--keep');
  const dir = mkdtempSync(join(tmpdir(), 'entity-git-bench-many-'));
  const gitVersion = git(dir, '--version').trim();
  console.log(
    `many-sessions bench: ${int(SESSIONS)} sessions of ${TURNS} turns (user + reply, ~330 characters each) in one SQLite database and one root`,
  );
  console.log(`node ${process.version}, ${gitVersion}, ${cpus().length} cpus, in ${dir}`);
  const store = await openSqlite({ file: join(dir, 'dag.db') });
  const messageBytes = await fill(store);
  const root = join(dir, 'root');
  const ids = Array.from({ length: SESSIONS }, (_, i) => sessionId(i));

  // 1. Backfill: `entity-git sync` on an empty root.
  const backfill = await timedReconcile(store, root);
  if (backfill.report.entries.some((e) => e.action !== 'backfilled'))
    fail(`backfill: ${JSON.stringify(backfill.report.entries.find((e) => e.action !== 'backfilled'))}`);
  for (const id of [ids[0]!, ids[SESSIONS >> 1]!, ids[SESSIONS - 1]!]) {
    const repo = join(root, id);
    fsckOr(fail, repo);
    if (git(repo, 'status', '--porcelain') !== '') fail(`git status in ${repo} is not clean`);
  }

  // 2. Native git: the same commits (fast-export of each repository, untimed) imported into a new
  // repository and checked out: init + fast-import + reset --hard, three processes a session.
  const nativeRoot = join(dir, 'native');
  const streams = ids
    .slice(0, NATIVE)
    .map((id) => execFileSync('git', ['fast-export', '--all'], { cwd: join(root, id), maxBuffer: 1 << 26 }));
  const n0 = performance.now();
  ids.slice(0, NATIVE).forEach((id, k) => {
    const repo = join(nativeRoot, id);
    execFileSync('git', ['init', '-q', '-b', 'main', repo]);
    execFileSync('git', ['fast-import', '--quiet'], { cwd: repo, input: streams[k]! });
    execFileSync('git', ['reset', '-q', '--hard', 'main'], { cwd: repo });
  });
  const nativeMs = performance.now() - n0;
  for (const id of [ids[0]!, ids[NATIVE - 1]!]) {
    if (git(join(nativeRoot, id), 'rev-parse', 'HEAD') !== git(join(root, id), 'rev-parse', 'HEAD'))
      fail(`native ${id}: another HEAD than entity-git's`);
  }

  // 3. Disk per session: blocks (`du -sk`) and bytes (`du -sb`, directories 4 KB each), median of a sample.
  const sample = ids.slice(0, Math.min(NATIVE, 50));
  const disk = {
    entityGitKB: stats(sample.map((id) => du(['-sk'], join(root, id)))).median,
    entityGitBytes: stats(sample.map((id) => du(['-sb'], join(root, id)))).median,
    nativeKB: stats(sample.map((id) => du(['-sk'], join(nativeRoot, id)))).median,
    nativeBytes: stats(sample.map((id) => du(['-sb'], join(nativeRoot, id)))).median,
  };
  if (!keep) rmSync(nativeRoot, { recursive: true, force: true });

  // 4. Start-up check, nothing changed: a new mirror (nothing in memory), every session.
  const quick = await timedReconcile(store, root);
  if (quick.report.entries.some((e) => e.action !== 'unchanged'))
    fail('nothing changed, yet a session was not unchanged');

  // 5. The full check (`--full`) on up to 500 sessions, for the per-session cost it had before.
  const fullIds = ids.slice(0, Math.min(SESSIONS, 500));
  const full = await timedReconcile(store, root, { full: true, sessions: fullIds });
  if (full.report.entries.some((e) => e.action !== 'unchanged')) fail('full check: a session differs');

  // 6. 1% changed: a turn appended to every hundredth session, then the start-up check.
  const changed = ids.filter((_, i) => i % 100 === 0);
  for (const id of changed) {
    const i = Number(id.slice(1));
    for (const n of sessionNodes(i, 1, 2 * TURNS)) await store.writer.appendNode({ ...n, content: n.content });
  }
  const onePercent = await timedReconcile(store, root);
  const repaired = onePercent.report.entries.filter((e) => e.action === 'repaired').length;
  if (repaired !== changed.length || onePercent.report.entries.some((e) => e.action === 'failed'))
    fail(`1% changed: ${repaired} repaired of ${changed.length}`);

  // 7. One session syncing beside the others, against a root holding that session alone.
  const lone = join(dir, 'lone');
  const busy = createNodeMirror({ dag: store.dag, root });
  const alone = createNodeMirror({ dag: store.dag, root: lone });
  const a = ids[1]!;
  const b = ids[2]!;
  await alone.sync(b);
  const turnMs = { busy: [] as number[], alone: [] as number[] };
  for (let t = 0; t < ONE_ROOT_TURNS; t++) {
    for (const [id, mirror, into] of [
      [a, busy, turnMs.busy],
      [b, alone, turnMs.alone],
    ] as const) {
      const i = Number(id.slice(1));
      const from = 2 * TURNS + 2 * t + (changed.includes(id) ? 2 : 0);
      for (const n of sessionNodes(i, 1, from)) await store.writer.appendNode(n);
      const t0 = performance.now();
      const r = await mirror.sync(id);
      into.push(performance.now() - t0);
      if (r.commitsWritten !== 1) fail(`turn ${t} of ${id}: ${r.commitsWritten} commits`);
    }
  }
  // 8. The start-up check alone, in a fresh process (its peak RSS is its own, not the setup's),
  // with every session of the root synced (the lone root's session gained turns there only).
  await busy.sync(b);
  const childRun = spawnSync(
    process.execPath,
    [...process.execArgv, new URL('./many-sessions-child.ts', import.meta.url).pathname, join(dir, 'dag.db'), root],
    { encoding: 'utf8', maxBuffer: 1 << 24 },
  );
  if (childRun.status !== 0) fail(`the fresh-process check failed: ${childRun.stderr}`);
  const fresh = JSON.parse(childRun.stdout) as {
    ms: number;
    base: number;
    peak: number;
    unchanged: number;
    total: number;
  };
  if (fresh.unchanged !== SESSIONS) fail(`fresh-process check: ${fresh.unchanged} of ${fresh.total} unchanged`);
  await store.close();

  const perSession = (ms: number, n: number) => `${(ms / n).toFixed(2)} ms`;
  const quickAfter = quick.pastHundred;
  const busyTurn = stats(turnMs.busy).median;
  const aloneTurn = stats(turnMs.alone).median;
  const rows: [string, string, string][] = [
    ['measure', 'entity-git', 'native git (init + fast-import + checkout of the same commits)'],
    ['disk per session, blocks (du -sk)', `${disk.entityGitKB} KB`, `${disk.nativeKB} KB`],
    [
      'disk per session, bytes (du -sb)',
      `${(disk.entityGitBytes / 1024).toFixed(1)} KB (${(disk.entityGitBytes / messageBytes).toFixed(1)}x its ${(messageBytes / 1024).toFixed(1)} KB of message JSON)`,
      `${(disk.nativeBytes / 1024).toFixed(1)} KB`,
    ],
    [
      `backfill, ${int(SESSIONS)} sessions`,
      `${(backfill.ms / 1000).toFixed(2)} s (${perSession(backfill.ms, SESSIONS)} a session)`,
      `${(nativeMs / 1000).toFixed(2)} s for ${int(NATIVE)} (${perSession(nativeMs, NATIVE)} a session; native/entity-git ${ratio(nativeMs / NATIVE / (backfill.ms / SESSIONS))})`,
    ],
    [
      'start-up check, nothing changed',
      `${(quick.ms / 1000).toFixed(2)} s (${quickAfter.toFixed(3)} ms a session past the first 100)`,
      '—',
    ],
    [
      "the same, --full (today's check)",
      `${perSession(full.ms, fullIds.length)} a session (${int(fullIds.length)} checked)`,
      '—',
    ],
    [
      `1% changed (${changed.length} sessions repaired)`,
      `${(onePercent.ms / 1000).toFixed(2)} s (${ratio(onePercent.ms / quick.ms)} the nothing-changed time)`,
      '—',
    ],
    [
      'peak RSS: backfill / check / 1% changed',
      `${mbOf(backfill.peak)} / ${mbOf(quick.peak)} / ${mbOf(onePercent.peak)} (before the check ${mbOf(quick.before)})`,
      '—',
    ],
    [
      'the check in a fresh process: time, peak RSS',
      `${(fresh.ms / 1000).toFixed(2)} s, ${mbOf(fresh.peak)} (${mbOf(fresh.base)} once the database is open)`,
      '—',
    ],
    [
      `one session's turn beside ${int(SESSIONS - 1)} others / alone`,
      `${busyTurn.toFixed(2)} / ${aloneTurn.toFixed(2)} ms (${ratio(busyTurn / aloneTurn)})`,
      '—',
    ],
  ];
  const w0 = Math.max(...rows.map((r) => r[0].length));
  const w1 = Math.max(...rows.map((r) => r[1].length));
  for (const r of rows) console.log(`  ${r[0].padEnd(w0)}   ${r[1].padEnd(w1)}   ${r[2]}`);
  if (keep) console.log(`kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
  writeResults('many-sessions', {
    node: process.version,
    git: gitVersion,
    sessions: SESSIONS,
    turns: TURNS,
    nativeSessions: NATIVE,
    messageBytesPerSession: messageBytes,
    disk,
    backfillMs: backfill.ms,
    nativeMs,
    quickMs: quick.ms,
    quickPerSessionAfter100Ms: quickAfter,
    fullPerSessionMs: full.ms / fullIds.length,
    onePercentMs: onePercent.ms,
    onePercentRepaired: repaired,
    rss: { backfill: backfill.peak, quick: quick.peak, quickBefore: quick.before, onePercent: onePercent.peak },
    turnBusy: stats(turnMs.busy),
    turnAlone: stats(turnMs.alone),
    freshCheck: fresh,
  });
}

const mbOf = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;
