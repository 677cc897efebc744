// The shadow snapshot's file system calls: synchronous, as @entity-git/node-fs makes its
// small-file calls, but in slices, so that a snapshot inside the host's turn leaves its event loop
// free. A thread-pool round trip per call costs more than the call itself: on a 2-core machine
// under load, 160 such calls took 5–7 ms through the pool and 3 ms synchronously, and an
// after-snapshot of 10 files (~250 calls) took 0.59–0.63× its time once its calls were made this
// way (BENCHMARKS.md, "shadow snapshots"). So each call runs at once, unless the loop has been held
// for SLICE_MS since it last turned: then the call first waits for a turn (setImmediate), in which
// the host's timers and I/O run. The loop is held at most SLICE_MS plus one call.
// docs/design.md §7, "When a snapshot trusts the watcher".
import * as fss from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { Storage, StorageFs } from '@entity-git/git';
import { nodeStorage } from '@entity-git/node-fs';

/** How long the snapshot's calls may hold the event loop before they let it turn. */
const SLICE_MS = 1;

/** The loop's slices: when the current one began, and the turn the calls past it wait for. */
class Slices {
  #start = performance.now();
  #turn: Promise<void> | null = null;

  /** Runs `call` (synchronous, small) once the loop may be held again; its error rejects. */
  async run<T>(call: () => T | Promise<T>): Promise<T> {
    while (performance.now() - this.#start >= SLICE_MS) await this.#nextTurn();
    return call();
  }

  /** The loop's next turn: every call waiting for it goes on in it, in order, while the slice lasts. */
  #nextTurn(): Promise<void> {
    this.#turn ??= new Promise((resolve) =>
      setImmediate(() => {
        this.#turn = null;
        this.#start = performance.now();
        resolve();
      }),
    );
    return this.#turn;
  }
}

/** One event loop a process: one set of slices for every shadow repository in it. */
const slices = new Slices();

/** Runs `call` (synchronous, small) once the loop may be held again; its error rejects. */
export const sliced = <T>(call: () => T | Promise<T>): Promise<T> => slices.run(call);

/** The file system calls of a snapshot, shaped as node:fs/promises' (the few options used here). */
export const lstat = (path: string): Promise<fss.Stats> => sliced(() => fss.lstatSync(path));
export const stat = (path: string): Promise<fss.Stats> => sliced(() => fss.statSync(path));
export const statBig = (path: string): Promise<fss.BigIntStats> => sliced(() => fss.statSync(path, { bigint: true }));
export const readdir = (path: string): Promise<string[]> => sliced(() => fss.readdirSync(path));
export const readlinkBytes = (path: string): Promise<Buffer> =>
  sliced(() => fss.readlinkSync(path, { encoding: 'buffer' }));
export const rm = (path: string): Promise<void> => sliced(() => fss.rmSync(path, { force: true }));

export function readFile(path: string): Promise<Buffer>;
export function readFile(path: string, encoding: 'utf8'): Promise<string>;
export function readFile(path: string, encoding?: 'utf8'): Promise<Buffer | string> {
  return sliced(() => fss.readFileSync(path, encoding));
}

/** A private file (0600 when it is made). */
export const writeFile = (path: string, data: string | Uint8Array): Promise<void> =>
  sliced(() => fss.writeFileSync(path, data, { mode: 0o600 }));

/** A private file made with `data`, unless one is there already: whether it was made. */
export const writeNew = (path: string, data: string): Promise<boolean> =>
  sliced(() => {
    try {
      fss.writeFileSync(path, data, { flag: 'wx', mode: 0o600 });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
  });

/** Every function of `fs`, each call in its slice. */
function slicedFs(fs: StorageFs): StorageFs {
  const out: Record<string, unknown> = {};
  for (const [name, call] of Object.entries(fs))
    out[name] = (...args: unknown[]) => sliced(() => (call as (...a: unknown[]) => unknown)(...args));
  return out as unknown as StorageFs;
}

// node-fs's storage: private modes, no fsync (git's default: a kill loses nothing the ref names,
// since the ref moves after its objects are written), its small calls synchronous.
const node = nodeStorage();

/** Loose objects, refs and packs of a shadow repository, each call in its slice. */
export const slicedNodeStorage: Storage = Object.freeze({
  name: 'node-fs (sliced)',
  fs: slicedFs(node.fs),
  codec: node.codec,
  createExclusive: (path: string, data: Uint8Array | string) => sliced(() => node.createExclusive!(path, data)),
  appendFile: (path: string, data: Uint8Array | string) => sliced(() => node.appendFile!(path, data)),
  readRange: (path: string, start: number, end: number) => sliced(() => node.readRange!(path, start, end)),
  readRangeInto: (path: string, start: number, target: Uint8Array) =>
    sliced(() => node.readRangeInto!(path, start, target)),
});
