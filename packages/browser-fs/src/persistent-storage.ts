/** What {@link requestPersistentStorage} found. */
export interface PersistenceReport {
  /** Whether the browser has `navigator.storage.persist`. */
  supported: boolean;
  /** Whether the origin's storage is now exempt from eviction under storage pressure. */
  persisted: boolean;
  /** Bytes used and available to the origin (`navigator.storage.estimate()`), null when unknown. */
  usage: number | null;
  quota: number | null;
}

/**
 * Ask the browser not to evict this origin's IndexedDB (the DAG and the repositories) under
 * storage pressure — `navigator.storage.persist()`. Browsers may prompt the user or decide by
 * engagement, so call it from a user gesture where you can; it never throws.
 */
export async function requestPersistentStorage(): Promise<PersistenceReport> {
  const s = globalThis.navigator?.storage;
  const report: PersistenceReport = {
    supported: typeof s?.persist === 'function',
    persisted: false,
    usage: null,
    quota: null,
  };
  if (!s) return report;
  try {
    report.persisted = (await s.persisted?.()) === true || (report.supported && (await s.persist()) === true);
  } catch {
    report.persisted = false;
  }
  try {
    const estimate = await s.estimate?.();
    report.usage = estimate?.usage ?? null;
    report.quota = estimate?.quota ?? null;
  } catch {
    // an estimate is a courtesy
  }
  return report;
}
