// Adopted sessions: the start-up check of thousands of unchanged sessions in a database the
// application made — entity-git's layout created by its own SQL, no trigger and no markers table,
// and the "flat-dag" schema — whose change markers are computed from the rows, beside the same
// sessions in entity-git's own schema, whose triggers keep them, in the same run and interleaved.
// Measures the markers' read alone (`changeMarkers`: one grouped query per table), the check in
// the process (`reconcile`, as `entity-git sync` runs it) in all and per session past the first
// hundred, `entity-git verify` as a process of its own, the full check for comparison, and the
// backfill of each (a sync reads a computed marker before and after its rows).
//
// `--sessions=N` (default 200; the goal's figure is 10,000), `--reps=R` (default 3), `--flat-dag`
// (the "flat-dag" schema too: a backfill of its own), `--query` (an OpenAI Agents SDK
// SQLiteSession too: recognised, read through its query-form mapping, its markers from the mapping's markers query), `--long=T` (the turns of the one long
// session whose syncs are timed, default 5,000), `--keep` keeps the directories, `--markers-only`
// times the markers' read alone, with no backfill (the part of the start-up check that differs by
// schema, in minutes where the whole run takes an hour on a loaded machine).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openSqlite, type SqlStore } from '../packages/sqlite/src/index.js';
import { tablesHash } from '../packages/sqlite/test/app-databases/fixtures/table-hash.js';
import { createNodeMirror } from '../packages/node-fs/src/index.js';
import { BASE_TIME, replyTurns } from './lib/conversation.js';
import { align, failWith, fsckOr, git, int, ratio, type Stats, stats, writeResults } from './lib/measure.js';
import { sessionId, timedReconcile } from './lib/small-sessions.js';
import { databases, type Db } from './lib/adopted-databases.js';

const fail = failWith('adopted-sessions');
const flag = (name: string, fallback: number): number => {
  const given = process.argv.find((a) => a.startsWith(`--${name}=`));
  return given === undefined ? fallback : Number(given.slice(name.length + 3));
};
const SESSIONS = flag('sessions', 200);
const REPS = flag('reps', 3);
const TURNS = 3;
const FULL = Math.min(SESSIONS, 500);
const LONG_TURNS = flag('long', 5000);
const LONG_NEW_TURNS = 10;
const CLI = new URL('../packages/cli/src/bin.ts', import.meta.url).pathname;

/** The store `entity-git verify` opens: read-only, nothing migrated. */
const readOnly = (db: Db) => openSqlite({ file: db.file, readonly: true });

/** `entity-git verify` in a process of its own: its wall time, start-up included. */
function cliVerify(db: Db): number {
  const t0 = performance.now();
  const r = spawnSync(
    process.execPath,
    [...process.execArgv, CLI, '--db', db.file, '--root', db.root, 'verify', '--json'],
    {
      encoding: 'utf8',
      maxBuffer: 1 << 28,
    },
  );
  const wall = performance.now() - t0;
  if (r.status !== 0) fail(`entity-git verify on ${db.label}: exit ${r.status}: ${r.stderr.slice(0, 500)}`);
  const out = JSON.parse(r.stdout) as { ok: boolean; sessions: unknown[] };
  if (!out.ok || out.sessions.length !== SESSIONS) fail(`entity-git verify on ${db.label}: not all ok`);
  return wall;
}

/** The process with its modules loaded and the database opened: `entity-git verify` of one session. */
function cliFloor(db: Db): number {
  const t0 = performance.now();
  const r = spawnSync(
    process.execPath,
    [...process.execArgv, CLI, '--db', db.file, '--root', db.root, 'verify', '--session', sessionId(0)],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) fail(`entity-git verify ${sessionId(0)} on ${db.label}: exit ${r.status}`);
  return performance.now() - t0;
}

/**
 * What a computed marker costs a sync: one session of `LONG_TURNS` turns in each database,
 * backfilled (untimed), then `LONG_NEW_TURNS` turns, each written by the application's connection
 * and synced by a read-only store's mirror, the databases interleaved; beside it the session's
 * marker computed once (a sync computes it before its rows; read again after them, it is kept
 * while no other connection committed) and a read of all its nodes.
 */
async function longSession(dbs: Db[], dir: string) {
  const id = 'long';
  const open = await Promise.all(
    dbs.map(async (db) => {
      const writer = await openSqlite({ file: db.file, migrate: false });
      await writer.writer.createSession({ id, title: 'Long', created_at: BASE_TIME });
      await writer.writer.appendNodes(replyTurns(id, 0x1019, LONG_TURNS));
      const reader = await readOnly(db);
      // A store of its own for the marker's timing: the mirror's keeps the marker it computed.
      const probe = await readOnly(db);
      const mirror = createNodeMirror({ dag: reader.dag, root: join(dir, `long-${dbs.indexOf(db)}`) });
      await mirror.sync(id);
      return { db, writer, reader, probe, mirror, turn: [] as number[], marker: [] as number[], read: [] as number[] };
    }),
  );
  for (let t = 0; t < LONG_NEW_TURNS; t++) {
    for (const o of open) {
      await o.writer.writer.appendNodes(replyTurns(id, 0x1019, 1, 2 * (LONG_TURNS + t)));
      const t0 = performance.now();
      const r = await o.mirror.sync(id);
      o.turn.push(performance.now() - t0);
      if (r.commitsWritten !== 1) fail(`${o.db.label}: a turn of the long session wrote ${r.commitsWritten} commits`);
      // A commit since the probe's last read: computed again.
      const m0 = performance.now();
      await o.probe.dag.changeMarker(id);
      o.marker.push(performance.now() - m0);
      if (t < 3) {
        const r0 = performance.now();
        let n = 0;
        for await (const _ of o.probe.dag.nodesAfter(id, 0)) n++;
        o.read.push(performance.now() - r0);
        if (n !== 2 * (LONG_TURNS + t + 1)) fail(`${o.db.label}: ${n} nodes in the long session`);
      }
    }
  }
  const out = new Map<Db, { turn: Stats; marker: Stats; read: Stats }>();
  for (const o of open) {
    fsckOr(fail, join(dir, `long-${dbs.indexOf(o.db)}`, id));
    out.set(o.db, { turn: stats(o.turn), marker: stats(o.marker), read: stats(o.read) });
    await o.probe.close();
    await o.reader.close();
    await o.writer.close();
  }
  return out;
}

export async function run(): Promise<void> {
  const keep = process.argv.includes('--keep');
  const loadBefore = loadavg();
  const dir = mkdtempSync(join(tmpdir(), 'entity-git-bench-adopted-'));
  console.log(
    `adopted-sessions bench: ${int(SESSIONS)} sessions of ${TURNS} turns (user + reply, ~330 characters each), ${REPS} interleaved reps`,
  );
  console.log(
    `node ${process.version}, ${cpus().length} cpus, load ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, in ${dir}`,
  );

  // 1. The databases: the same sessions in each.
  const dbs = await databases(dir, SESSIONS, TURNS);
  const [own, adopted] = dbs as [Db, Db];
  if (process.argv.includes('--markers-only')) return markersOnly(dbs, dir, keep);

  // 2. Each backfilled into a root of its own (`entity-git sync` on an empty root).
  const backfillMs = await backfillEach(dbs);

  // 3. Nothing changed, rep by rep, the databases interleaved: the markers' read alone, the check in
  // the process (a store opened as the CLI opens it, a new mirror), entity-git verify as a process.
  const { samples, floor } = await unchangedChecks(dbs, own);

  // 4. The full check (`--full`) on the first sessions, for the cost the fast path saves.
  const fullMs = await fullChecks(dbs);
  for (const db of dbs)
    if (db.hash !== null && tablesHash(db.file) !== db.hash) fail(`${db.label}: its tables changed`);

  const long = await longSession([own, adopted], dir);

  const rows = resultRows({ dbs, own, backfillMs, samples, floor, fullMs, long });
  console.log(align(rows));
  const loadAfter = loadavg();
  console.log(`load after: ${loadAfter.map((l) => l.toFixed(2)).join(' ')}`);
  writeResults('adopted-sessions', {
    node: process.version,
    sessions: SESSIONS,
    turns: TURNS,
    reps: REPS,
    load: { before: loadBefore, after: loadAfter },
    cliFloorMs: stats(floor),
    databases: dbs.map((db) => ({
      label: db.label,
      backfillPerSessionMs: backfillMs.get(db)! / SESSIONS,
      markersMs: stats(samples.get(db)!.markers),
      checkMs: stats(samples.get(db)!.check),
      checkPastHundredMs: stats(samples.get(db)!.past),
      cliVerifyMs: stats(samples.get(db)!.cli),
      fullPerSessionMs: fullMs.get(db),
      longSession: long.get(db) ?? null,
    })),
  });
  // Last: tens of thousands of repositories take a while to remove.
  if (keep) console.log(`kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}

/** The table the bench prints: a row a measure, a column a database. */
function resultRows(o: {
  dbs: Db[];
  own: Db;
  backfillMs: Map<Db, number>;
  samples: Awaited<ReturnType<typeof unchangedChecks>>['samples'];
  floor: number[];
  fullMs: Map<Db, number>;
  long: Awaited<ReturnType<typeof longSession>>;
}): string[][] {
  const { dbs, own, backfillMs, samples, floor, fullMs, long } = o;
  const med = (db: Db, key: 'markers' | 'check' | 'past' | 'cli') => stats(samples.get(db)![key]).median;
  const floorMs = stats(floor).median;
  const rows = [
    ['measure', ...dbs.map((db) => db.label)],
    ['backfill, a session', ...dbs.map((db) => `${(backfillMs.get(db)! / SESSIONS).toFixed(2)} ms`)],
    ['every marker (changeMarkers)', ...dbs.map((db) => `${med(db, 'markers').toFixed(0)} ms`)],
    [
      `start-up check, nothing changed (${int(SESSIONS)})`,
      ...dbs.map(
        (db) => `${(med(db, 'check') / 1000).toFixed(2)} s (${ratio(med(db, 'check') / med(own, 'check'))} own)`,
      ),
    ],
    [
      'the same, a session past the first 100',
      ...dbs.map((db) => `${med(db, 'past').toFixed(3)} ms (${ratio(med(db, 'past') / med(own, 'past'))} own)`),
    ],
    [
      `entity-git verify, a process (one session: ${(floorMs / 1000).toFixed(2)} s)`,
      ...dbs.map((db) => `${(med(db, 'cli') / 1000).toFixed(2)} s (${ratio(med(db, 'cli') / med(own, 'cli'))} own)`),
    ],
    [`full check, a session (${int(FULL)})`, ...dbs.map((db) => `${fullMs.get(db)!.toFixed(2)} ms`)],
    [
      `a turn's sync, ${int(LONG_TURNS)}-turn session`,
      ...dbs.map((db) => (long.has(db) ? `${long.get(db)!.turn.median.toFixed(1)} ms` : '—')),
    ],
    [
      'its marker / reading its nodes',
      ...dbs.map((db) =>
        long.has(db) ? `${long.get(db)!.marker.median.toFixed(1)} / ${long.get(db)!.read.median.toFixed(0)} ms` : '—',
      ),
    ],
  ];
  return rows;
}

/** Each database backfilled into a root of its own (`entity-git sync` on an empty root), timed; the first and last repository checked by native git. */
async function backfillEach(dbs: Db[]): Promise<Map<Db, number>> {
  const backfillMs = new Map<Db, number>();
  for (const db of dbs) {
    const store = await readOnly(db);
    const r = await timedReconcile(store, db.root);
    await store.close();
    if (r.report.entries.some((e) => e.action !== 'backfilled')) fail(`backfill of ${db.label}: not all backfilled`);
    backfillMs.set(db, r.ms);
    for (const id of [sessionId(0), sessionId(SESSIONS - 1)]) {
      fsckOr(fail, join(db.root, id));
      if (git(join(db.root, id), 'status', '--porcelain') !== '')
        fail(`git status in ${db.label}'s ${id} is not clean`);
    }
  }
  return backfillMs;
}

/** `REPS` reps, the databases interleaved: the markers' read, the check in the process, `entity-git verify` as a process; the floor is a verify of one session. */
async function unchangedChecks(dbs: Db[], own: Db) {
  const samples = new Map(
    dbs.map((db) => [
      db,
      { markers: [] as number[], check: [] as number[], past: [] as number[], cli: [] as number[] },
    ]),
  );
  const floor: number[] = [];
  for (let rep = 0; rep < REPS; rep++) {
    floor.push(cliFloor(own));
    for (const db of dbs) {
      const s = samples.get(db)!;
      let store: SqlStore = await readOnly(db);
      const t0 = performance.now();
      const markers = await store.dag.changeMarkers();
      s.markers.push(performance.now() - t0);
      if (markers.size !== SESSIONS || [...markers.values()].some((m) => m === null))
        fail(`${db.label}: ${markers.size} markers for ${SESSIONS} sessions`);
      await store.close();
      store = await readOnly(db);
      const check = await timedReconcile(store, db.root);
      await store.close();
      if (check.report.entries.some((e) => e.action !== 'unchanged')) fail(`${db.label}: a session was not unchanged`);
      s.check.push(check.ms);
      s.past.push(check.pastHundred);
      s.cli.push(cliVerify(db));
    }
  }
  return { samples, floor };
}

/** The full check (`--full`) of the first `FULL` sessions of each database: ms a session. */
async function fullChecks(dbs: Db[]): Promise<Map<Db, number>> {
  const fullMs = new Map<Db, number>();
  for (const db of dbs) {
    const store = await readOnly(db);
    const r = await timedReconcile(store, db.root, {
      full: true,
      sessions: Array.from({ length: FULL }, (_, i) => sessionId(i)),
    });
    await store.close();
    if (r.report.entries.some((e) => e.action !== 'unchanged')) fail(`${db.label}: the full check found a difference`);
    fullMs.set(db, r.ms / FULL);
  }
  return fullMs;
}

/**
 * `--markers-only`: `changeMarkers()` on each database, opened as the CLI opens it, `REPS` times
 * interleaved; nothing backfilled. The rest of the start-up check (each repository's refs read)
 * is the same work whatever the schema.
 */
async function markersOnly(dbs: Db[], dir: string, keep: boolean): Promise<void> {
  const samples = new Map(dbs.map((db) => [db, [] as number[]]));
  for (let rep = 0; rep < REPS; rep++) {
    for (const db of dbs) {
      const store = await readOnly(db);
      const t0 = performance.now();
      const markers = await store.dag.changeMarkers();
      samples.get(db)!.push(performance.now() - t0);
      await store.close();
      if (markers.size !== SESSIONS || [...markers.values()].some((m) => m === null))
        fail(`${db.label}: ${markers.size} markers for ${SESSIONS} sessions`);
    }
  }
  for (const db of dbs)
    if (db.hash !== null && tablesHash(db.file) !== db.hash) fail(`${db.label}: its tables changed`);
  const own = stats(samples.get(dbs[0]!)!).median;
  console.log(
    align([
      ['measure', ...dbs.map((db) => db.label)],
      [
        `every marker (changeMarkers), ${int(SESSIONS)} sessions`,
        ...dbs.map((db) => {
          const m = stats(samples.get(db)!).median;
          return `${m.toFixed(0)} ms (${ratio(m / own)} own)`;
        }),
      ],
    ]),
  );
  console.log(
    `load after: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  writeResults('adopted-sessions-markers', {
    node: process.version,
    sessions: SESSIONS,
    reps: REPS,
    databases: dbs.map((db) => ({ label: db.label, markersMs: stats(samples.get(db)!) })),
  });
  if (keep) console.log(`kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}
