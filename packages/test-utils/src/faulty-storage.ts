import type { Storage, StorageFs } from '@entity-git/core';

/** A storage that fails chosen writes: the failure-injection seam of the service and crash tests. */
export interface FaultyStorage extends Storage {
  /** Make the next `count` writes (writeFile, rename, createExclusive, appendFile) throw EIO. */
  failNext(count: number): void;
  /** Let `count` more writes through, then fail every later one (a crash at that write). */
  crashAfter(count: number): void;
  /** Writes attempted so far, and how many were failed on purpose. */
  readonly stats: { writes: number; failed: number };
}

export function faultyStorage(inner: Storage): FaultyStorage {
  let toFail = 0;
  let allowed = Infinity;
  const stats = { writes: 0, failed: 0 };
  const gate = () => {
    stats.writes++;
    if (allowed <= 0) {
      stats.failed++;
      throw Object.assign(new Error('EIO: injected crash'), { code: 'EIO' });
    }
    allowed--;
    if (toFail > 0) {
      toFail--;
      stats.failed++;
      throw Object.assign(new Error('EIO: injected write failure'), { code: 'EIO' });
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
      gate();
      return inner.fs.writeFile(p, d, o);
    },
    rename: async (a, b) => {
      gate();
      return inner.fs.rename(a, b);
    },
  };
  const wrapped: FaultyStorage = {
    ...inner,
    name: `${inner.name}+faults`,
    fs,
    failNext(count: number) {
      toFail = count;
    },
    crashAfter(count: number) {
      allowed = count;
    },
    stats,
  };
  if (inner.createExclusive) {
    const create = inner.createExclusive.bind(inner);
    wrapped.createExclusive = async (p, d) => {
      gate();
      return create(p, d);
    };
  }
  if (inner.appendFile) {
    const append = inner.appendFile.bind(inner);
    wrapped.appendFile = async (p, d) => {
      gate();
      return append(p, d);
    };
  }
  return wrapped;
}
