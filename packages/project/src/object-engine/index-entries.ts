import type { StorageStat, WorkIndex, WorkIndexEntry } from '@entity-git/git';
import type { FileState } from '../project-git-engine.js';

export const EMPTY_BLOB = 'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391';

/** Stat data as the index records it: whole seconds and nanoseconds, truncated to 32 bits. */
export function statTimes(st: StorageStat): {
  mtimeSec: number;
  mtimeNsec: number;
  ctimeSec: number;
  ctimeNsec: number;
  nsExact: boolean;
} {
  const split = (ms: number, ns: bigint | undefined): [number, number] => {
    if (ns !== undefined) return [Number(ns / 1_000_000_000n), Number(ns % 1_000_000_000n)];
    const sec = Math.floor(ms / 1000);
    return [sec, Math.round((ms - sec * 1000) * 1e6)];
  };
  const [mtimeSec, mtimeNsec] = split(st.mtimeMs, st.mtimeNs);
  const [ctimeSec, ctimeNsec] = split(st.ctimeMs ?? st.mtimeMs, st.ctimeNs);
  return { mtimeSec, mtimeNsec, ctimeSec, ctimeNsec, nsExact: st.mtimeNs !== undefined };
}

/** The index with exactly the given paths set (stat data included where known, so status stays fast), racily-clean entries smudged. */
export function nextIndex(
  index: WorkIndex,
  indexStat: StorageStat | null,
  captured: ReadonlyArray<{ state: FileState; st: StorageStat | null }>,
): WorkIndex {
  const paths = new Set(captured.map((c) => c.state.path));
  const added = captured.filter((c) => c.state.oid !== null).map((c) => c.state.path);
  const it = indexStat === null ? null : statTimes(indexStat);
  const entries = index.entries
    .filter((e) => !paths.has(e.path))
    // A committed file replaces a directory of entries, and a committed entry a file where its directory is.
    .filter((e) => !added.some((p) => e.path.startsWith(`${p}/`) || p.startsWith(`${e.path}/`)))
    .map((e) => {
      const racy =
        it !== null && (e.mtimeSec > it.mtimeSec || (e.mtimeSec === it.mtimeSec && e.mtimeNsec >= it.mtimeNsec));
      return racy && e.oid !== EMPTY_BLOB ? { ...e, size: 0 } : e;
    });
  for (const c of captured) {
    if (c.state.oid === null) continue;
    // Without stat data (as `update-index --index-info` leaves an entry) the file is hashed to compare.
    const t = c.st === null ? { ctimeSec: 0, ctimeNsec: 0, mtimeSec: 0, mtimeNsec: 0 } : statTimes(c.st);
    entries.push({
      ctimeSec: t.ctimeSec,
      ctimeNsec: t.ctimeNsec,
      mtimeSec: t.mtimeSec,
      mtimeNsec: t.mtimeNsec,
      dev: c.st?.dev ?? 0,
      ino: c.st?.ino ?? 0,
      mode: parseInt(c.state.mode!, 8),
      uid: c.st?.uid ?? 0,
      gid: c.st?.gid ?? 0,
      size: c.st?.size ?? 0,
      oid: c.state.oid,
      stage: 0,
      assumeValid: false,
      skipWorktree: false,
      intentToAdd: false,
      path: c.state.path,
    });
  }
  return { version: index.version, entries, extensions: index.extensions };
}

/** Whether stat data proves the file unchanged since the index entry was written (git's racy-git rule included). */
export function statClean(e: WorkIndexEntry, st: StorageStat, indexStat: StorageStat | null): boolean {
  const t = statTimes(st);
  if (st.size >>> 0 !== e.size || st.ino >>> 0 !== e.ino) return false;
  if (e.size === 0 && e.oid !== EMPTY_BLOB) return false;
  if (t.mtimeSec >>> 0 !== e.mtimeSec || t.ctimeSec >>> 0 !== e.ctimeSec) return false;
  if (
    t.nsExact
      ? t.mtimeNsec !== e.mtimeNsec || t.ctimeNsec !== e.ctimeNsec
      : Math.floor(t.mtimeNsec / 1e6) !== Math.floor(e.mtimeNsec / 1e6)
  )
    return false;
  if (indexStat === null) return false;
  // Written in the same instant as the index (or later): the stat data cannot tell a change apart.
  const it = statTimes(indexStat);
  return e.mtimeSec < it.mtimeSec || (e.mtimeSec === it.mtimeSec && e.mtimeNsec < it.mtimeNsec);
}
