import { Worker } from 'node:worker_threads';
import type { StorageStat, WorkTreeFile } from '@entity-git/git';

/** What {@link NodeStat} is made from: a `BigIntStats`, or the same fields from the writer thread. */
interface StatFields {
  mode: bigint;
  size: bigint;
  ino: bigint;
  dev: bigint;
  uid: bigint;
  gid: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
}

const S_IFMT = 0o170000;

export class NodeStat implements StorageStat {
  mode: number;
  size: number;
  ino: number;
  dev: number;
  uid: number;
  gid: number;
  mtimeMs: number;
  ctimeMs: number;
  mtimeNs: bigint;
  ctimeNs: bigint;
  constructor(s: StatFields) {
    this.mode = Number(s.mode);
    this.size = Number(s.size);
    this.ino = Number(s.ino);
    this.dev = Number(s.dev);
    this.uid = Number(s.uid);
    this.gid = Number(s.gid);
    this.mtimeMs = Number(s.mtimeNs / 1_000_000n);
    this.ctimeMs = Number(s.ctimeNs / 1_000_000n);
    this.mtimeNs = s.mtimeNs;
    this.ctimeNs = s.ctimeNs;
  }
  isFile(): boolean {
    return (this.mode & S_IFMT) === 0o100000;
  }
  isDirectory(): boolean {
    return (this.mode & S_IFMT) === 0o040000;
  }
  isSymbolicLink(): boolean {
    return (this.mode & S_IFMT) === 0o120000;
  }
}

/** The order of a file's stat fields in the writer thread's answer. */
const STAT_FIELDS = ['mode', 'size', 'ino', 'dev', 'uid', 'gid', 'mtimeNs', 'ctimeNs'] as const;

/**
 * The writer thread of {@link writeFilesOffThread} (CommonJS, evaluated): writes each file in
 * place (its parent made when missing), fsynced when asked, and answers with every file's stat
 * fields (from its descriptor, before it is closed), or with the first failure (a file a full
 * disk cut short is removed).
 */
const WRITER = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const { dirname } = require('node:path');
const FIELDS = ${JSON.stringify(STAT_FIELDS)};
// 0600 files, 0700 directories: a session's work tree is its conversation (node-storage.ts).
function write(path, data, fsync) {
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = fs.openSync(path, 'w', 0o600);
      try {
        for (let at = 0; at < data.length; ) at += fs.writeSync(fd, data, at);
        if (fsync) fs.fsyncSync(fd);
        // The file's stat from its descriptor: no second walk of its path.
        return fs.fstatSync(fd, { bigint: true });
      } finally { fs.closeSync(fd); }
    } catch (err) {
      if (err.code !== 'ENOENT' || attempt >= 4) throw err;
      fs.mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    }
  }
}
function run({ buffer, ends, paths, fsync }) {
  const bytes = new Uint8Array(buffer);
  const stats = new BigUint64Array(paths.length * FIELDS.length);
  // Directories first: files created in a directory made among them were slower to create (ext4,
  // this machine kind) than in one made before them. A directory that cannot be made fails its first
  // file's write, in order.
  for (const dir of new Set(paths.map(dirname))) {
    try { fs.mkdirSync(dir, { recursive: true, mode: 0o700 }); } catch {}
  }
  let start = 0;
  for (let i = 0; i < paths.length; i++) {
    const path = paths[i];
    try {
      const st = write(path, bytes.subarray(start, ends[i]), fsync);
      FIELDS.forEach((f, k) => { stats[i * FIELDS.length + k] = st[f]; });
    } catch (err) {
      if (err.code === 'ENOSPC' || err.code === 'EDQUOT') { try { fs.unlinkSync(path); } catch {} }
      return { failed: i, code: err.code, message: err.message };
    }
    start = ends[i];
  }
  return { stats };
}
parentPort.on('message', (job) => {
  const answer = run(job);
  parentPort.postMessage(answer, answer.stats ? [answer.stats.buffer] : []);
});
`;

/**
 * A writer thread the last call left, kept for the next one (unreferenced: it never keeps the
 * process alive): starting a thread costs a new isolate, tens of ms of CPU an import spent.
 */
let idle: Worker | null = null;

function takeWriter(): Worker {
  const worker = idle ?? new Worker(WRITER, { eval: true });
  if (worker !== idle)
    worker.once('exit', () => {
      if (idle === worker) idle = null;
    });
  idle = null;
  worker.ref();
  return worker;
}

function giveBack(worker: Worker): void {
  worker.unref();
  if (idle === null) idle = worker;
  else void worker.terminate();
}

/**
 * Files handed to the writer thread in one message: at most this many, and at most
 * {@link BATCH_BYTES} (a larger file goes alone). Copying every file of a backfill into one
 * buffer, and making every stat of the answer, each held the caller's event loop for tens of ms
 * in a fresh process (the code not yet compiled); one batch's stats and the next one's copy are one
 * short task.
 */
const BATCH_FILES = 256;
const BATCH_BYTES = 1 << 20;

/** The files of one message to the writer thread: `[from, to)` of the caller's list. */
function batches(files: readonly WorkTreeFile[]): [number, number][] {
  const out: [number, number][] = [];
  let from = 0;
  let bytes = 0;
  for (let i = 0; i < files.length; i++) {
    const size = files[i]!.data.length;
    if (i > from && (i - from >= BATCH_FILES || bytes + size > BATCH_BYTES)) {
      out.push([from, i]);
      from = i;
      bytes = 0;
    }
    bytes += size;
  }
  if (from < files.length) out.push([from, files.length]);
  return out;
}

/** One batch's message: its bytes copied once into a buffer handed over whole. */
function batchJob(files: readonly WorkTreeFile[], from: number, to: number, fsync: boolean) {
  let total = 0;
  for (let i = from; i < to; i++) total += files[i]!.data.length;
  const buffer = new ArrayBuffer(total);
  const bytes = new Uint8Array(buffer);
  const ends = new Float64Array(to - from);
  const paths: string[] = [];
  let at = 0;
  for (let i = from; i < to; i++) {
    const f = files[i]!;
    bytes.set(f.data, at);
    at += f.data.length;
    ends[i - from] = at;
    paths.push(f.path);
  }
  return { buffer, ends, paths, fsync };
}

/**
 * {@link Storage.writeFiles}: the files written on a worker thread, in batches ({@link BATCH_FILES}),
 * one at a time in the caller's order, the stats handed back the same way. The caller's thread
 * goes on meanwhile (a backfill builds its pack); file creation is the kernel's work, so the two
 * overlap even on two cores. A thread is worth starting for many files: the mirror asks from 256.
 * The thread is kept, idle, for the next call. The first failure ends the call: no later batch
 * is sent.
 */
export function writeFilesOffThread(files: readonly WorkTreeFile[], fsync: boolean): Promise<StorageStat[]> {
  const parts = batches(files);
  const out: StorageStat[] = [];
  if (parts.length === 0) return Promise.resolve(out);
  return new Promise((resolve, reject) => {
    const worker = takeWriter();
    let next = 0;
    let paths: string[] = [];
    const send = () => {
      const [from, to] = parts[next++]!;
      const job = batchJob(files, from, to, fsync);
      paths = job.paths;
      worker.postMessage(job, [job.buffer]);
    };
    const done = () => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    const onError = (err: unknown) => {
      done();
      reject(err);
    };
    const onExit = (code: number) => {
      done();
      reject(new Error(`the working-tree writer thread exited (${code}) before it answered`));
    };
    const onMessage = (m: { stats: BigUint64Array } | { failed: number; code?: string; message: string }) => {
      if (!('stats' in m)) {
        done();
        giveBack(worker);
        reject(Object.assign(new Error(m.message), { code: m.code, path: paths[m.failed] }));
        return;
      }
      const n = STAT_FIELDS.length;
      for (let i = 0; i < paths.length; i++) {
        const f = m.stats.subarray(i * n, (i + 1) * n);
        out.push(
          new NodeStat({
            mode: f[0]!,
            size: f[1]!,
            ino: f[2]!,
            dev: f[3]!,
            uid: f[4]!,
            gid: f[5]!,
            mtimeNs: f[6]!,
            ctimeNs: f[7]!,
          }),
        );
      }
      if (next < parts.length) return send();
      done();
      giveBack(worker);
      resolve(out);
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    send();
  });
}
