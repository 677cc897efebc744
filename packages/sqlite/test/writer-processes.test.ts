import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { MIGRATION_TABLE, openSqlite } from '../src/index.js';
import type { WorkerReport, WorkerTask } from './fixtures/append-worker.js';
import { tempDir } from './helpers/temp.js';
import { builtChild } from '@entity-git/test-utils/node-child';

const WORKER = fileURLToPath(new URL('./fixtures/append-worker.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const PROCESSES = 4;

/**
 * Runs one worker as a real `node` process (on the built packages); `ready` resolves when it is
 * set up and waits for `go()`, `report` when it has exited.
 */
function startWorker(task: WorkerTask): { ready: Promise<void>; go: () => void; report: Promise<WorkerReport> } {
  const child = spawn(process.execPath, [builtChild(WORKER), JSON.stringify(task)], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const report = new Promise<WorkerReport>((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.startsWith('ready\n')) markReady();
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`worker ${task.worker} exited with ${code}: ${err}`));
      try {
        resolve(JSON.parse(out.trim().split('\n').at(-1)!) as WorkerReport);
      } catch {
        reject(new Error(`worker ${task.worker} printed no report: ${out} ${err}`));
      }
    });
  });
  // A worker that dies before it is ready must fail the test, not hang it.
  void report.catch(() => markReady());
  return { ready, go: () => child.stdin.end('go\n'), report };
}

async function runAll(base: Omit<WorkerTask, 'worker'>): Promise<WorkerReport[]> {
  const workers = Array.from({ length: PROCESSES }, (_, i) => startWorker({ ...base, worker: i + 1 }));
  await Promise.all(workers.map((w) => w.ready));
  for (const w of workers) w.go();
  return Promise.all(workers.map((w) => w.report));
}

describe('several processes writing one SQLite file', () => {
  let tmp: ReturnType<typeof tempDir> | undefined;
  afterEach(() => tmp?.remove());

  it('four processes appending for seconds: no BUSY, no error, and every session has seqs 1..n with no gap or duplicate', async () => {
    tmp = tempDir();
    const file = join(tmp.dir, 'shared.sqlite');
    const sessions = ['s1', 's2', 's3'];
    const setup = await openSqlite({ file });
    for (const id of sessions) await setup.writer.createSession({ id });
    await setup.close();

    const reports = await runAll({ mode: 'append', file, sessions, durationMs: 2000, minWrites: 60 });

    expect(reports.flatMap((r) => r.errors)).toEqual([]);
    const store = await openSqlite({ file });
    try {
      let total = 0;
      let interleavings = 0;
      for (const sessionId of sessions) {
        const nodes = [];
        for await (const n of store.dag.nodesAfter(sessionId, 0, { batchSize: 97 })) nodes.push(n);
        const written = reports.flatMap((r) => r.appended[sessionId] ?? []);
        total += written.length;
        expect(nodes.map((n) => n.seq)).toEqual(Array.from({ length: nodes.length }, (_, i) => i + 1));
        expect(nodes.length).toBe(written.length);
        // The seq each writer was told is the seq stored.
        const stored = new Map(nodes.map((n) => [n.id, n.seq]));
        for (const [id, seq] of written) expect(stored.get(id)).toBe(seq);
        // Each writer's own appends keep its order.
        for (const r of reports) {
          const mine = (r.appended[sessionId] ?? []).map(([, seq]) => seq);
          expect(mine).toEqual([...mine].sort((a, b) => a - b));
        }
        expect(nodes.filter((n) => (n.metadata as { pending?: boolean } | null)?.pending === true)).toEqual([]);
        for (let i = 1; i < nodes.length; i++)
          if (nodes[i]!.id.split('-')[0] !== nodes[i - 1]!.id.split('-')[0]) interleavings++;
        const head = await store.dag.getHead(sessionId);
        expect(head === null || stored.has(head)).toBe(true);
      }
      // The run proves something only if the processes really contended for the same sessions.
      expect(total).toBeGreaterThan(PROCESSES * 50);
      expect(interleavings).toBeGreaterThan(PROCESSES);
      for (const r of reports) expect(Object.values(r.appended).flat().length).toBeGreaterThan(20);
    } finally {
      await store.close();
    }
  });

  it('four processes opening a file that does not exist yet: one schema, one winner for a shared session', async () => {
    tmp = tempDir();
    const file = join(tmp.dir, 'fresh.sqlite');
    const reports = await runAll({ mode: 'fresh', file, sessions: ['shared'], durationMs: 300 });

    expect(reports.flatMap((r) => r.created)).toEqual(['shared']);
    // The losers are told why, by code; nothing else went wrong.
    expect(reports.flatMap((r) => r.errors.map((e) => e.code))).toEqual([
      'INVALID_SESSION',
      'INVALID_SESSION',
      'INVALID_SESSION',
    ]);
    const store = await openSqlite({ file });
    try {
      const migrations = await store.db.selectFrom(MIGRATION_TABLE).select('name').execute();
      expect(migrations.map((m) => m.name)).toEqual(['0001_initial', '0002_change_marks']);
      const seqs: number[] = [];
      for await (const n of store.dag.nodesAfter('shared')) seqs.push(n.seq);
      expect(seqs.length).toBe(reports.flatMap((r) => r.appended.shared ?? []).length);
      expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
    } finally {
      await store.close();
    }
  });

  it("the control: kysely's own deferred transactions, under the same load, do hit SQLITE_BUSY", async () => {
    tmp = tempDir();
    const file = join(tmp.dir, 'control.sqlite');
    const setup = await openSqlite({ file });
    await setup.writer.createSession({ id: 's1' });
    await setup.close();

    const reports = await runAll({ mode: 'deferred', file, sessions: ['s1'], durationMs: 800, minWrites: 40 });

    // What the writer avoids, shown to happen: without BEGIN IMMEDIATE the read-then-write
    // transaction fails at once when another process committed since it read.
    const codes = new Set(reports.flatMap((r) => r.errors.map((e) => e.code)));
    expect([...codes].some((c) => c.startsWith('SQLITE_BUSY'))).toBe(true);
  });
});
