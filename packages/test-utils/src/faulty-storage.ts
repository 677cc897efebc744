import type { Storage, StorageFs } from '@entity-git/git';

/** A storage that fails chosen writes: the failure-injection seam of the service and crash tests. */
export interface FaultyStorage extends Storage {
  /** Make the next `count` writes (writeFile, rename, createExclusive, appendFile) throw EIO. */
  failNext(count: number): void;
  /** Let `count` more writes through, then fail every later one (a crash at that write). */
  crashAfter(count: number): void;
  /** Let `n - 1` more writes through, fail the n-th, and let every later one through. */
  failAt(n: number): void;
  /** Writes attempted so far, how many were failed on purpose, and the paths of those. */
  readonly stats: { writes: number; failed: number; failedPaths: string[] };
}

export function faultyStorage(inner: Storage): FaultyStorage {
  let toFail = 0;
  let allowed = Infinity;
  let failing = -1;
  const stats = { writes: 0, failed: 0, failedPaths: [] as string[] };
  const fail = (path: string, what: string): never => {
    stats.failed++;
    stats.failedPaths.push(path);
    throw Object.assign(new Error(`EIO: injected ${what}`), { code: 'EIO' });
  };
  const gate = (path: string) => {
    stats.writes++;
    if (allowed <= 0) fail(path, 'crash');
    allowed--;
    if (stats.writes === failing) fail(path, 'write failure');
    if (toFail > 0) {
      toFail--;
      fail(path, 'write failure');
    }
  };
  const fs: StorageFs = {
    ...inner.fs,
    readFile: inner.fs.readFile.bind(inner.fs),
    readdir: inner.fs.readdir.bind(inner.fs),
    stat: inner.fs.stat.bind(inner.fs),
    lstat: inner.fs.lstat.bind(inner.fs),
    mkdir: inner.fs.mkdir.bind(inner.fs),
    rmdir: inner.fs.rmdir.bind(inner.fs),
    unlink: inner.fs.unlink.bind(inner.fs),
    writeFile: async (p, d, o) => {
      gate(p);
      return inner.fs.writeFile(p, d, o);
    },
    rename: async (a, b) => {
      gate(b);
      return inner.fs.rename(a, b);
    },
  };
  // Without the adapter's own writeFiles: core then writes file by file through `fs`, each write
  // gated here (@entity-git/node-fs's would write them on a thread this wrapper cannot see into).
  const { writeFiles: _unseen, ...rest } = inner;
  const wrapped: FaultyStorage = {
    ...rest,
    name: `${inner.name}+faults`,
    fs,
    failNext(count: number) {
      toFail = count;
    },
    crashAfter(count: number) {
      allowed = count;
    },
    failAt(n: number) {
      failing = stats.writes + n;
    },
    stats,
  };
  if (inner.createExclusive) {
    const create = inner.createExclusive.bind(inner);
    wrapped.createExclusive = async (p, d) => {
      gate(p);
      return create(p, d);
    };
  }
  if (inner.appendFile) {
    const append = inner.appendFile.bind(inner);
    wrapped.appendFile = async (p, d) => {
      gate(p);
      return append(p, d);
    };
  }
  return wrapped;
}
