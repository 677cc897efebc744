import type { LightningPromises } from './lightning-fs.js';

/** What this storage reaches inside LightningFS 4.10.3 (pinned) to batch its writes. */
export interface LightningInternals {
  _wrap?: (
    fn: (...args: never[]) => Promise<unknown>,
    clean: (...args: unknown[]) => unknown[],
    mutating: boolean,
  ) => (...args: unknown[]) => Promise<unknown>;
  _backend?: Record<string, unknown> & {
    _saveSuperblock?: () => Promise<void>;
    _cache?: {
      writeStat(path: string, size: number, o: { mode?: number }): { ino: number };
      unlink(path: string): void;
      _root?: Map<unknown, unknown>;
    };
    _idb?: { _store?: { _withIDBStore(type: 'readwrite', fn: (store: IDBObjectStore) => void): Promise<void> } };
  };
}

/**
 * LightningFS (4.10.3, pinned) saves its tree when it goes idle, then lets go of its fs-wide
 * lock. When that save fails — a full origin — its `deactivate` rejects before letting go, and
 * every later operation rethrows that rejection: the page is wedged and other tabs wait on the
 * lock until it closes (seen in the quota test). Going idle must always let go: the unsaved tail
 * of the tree is dropped, as a reload drops it, and the next operation loads the saved tree.
 * `beforeSave` runs before every save of the tree (the storage writes the file bytes it holds
 * back first, so a saved tree never names bytes that are not in IndexedDB); `afterLetGo` once
 * it has let go (another tab may write from then on).
 */
export function patchBackend(
  p: LightningPromises,
  hooks: { beforeSave: () => Promise<void>; afterLetGo: () => void },
): boolean {
  const backend = (p as unknown as LightningInternals)._backend;
  if (
    !backend ||
    typeof backend.deactivate !== 'function' ||
    typeof backend._saveSuperblock !== 'function' ||
    backend.egLetsGo === true
  )
    return false;
  const deactivate = (backend.deactivate as () => Promise<void>).bind(backend);
  const save = backend._saveSuperblock.bind(backend);
  const part = <K extends string>(name: K) => backend[name] as Record<string, (() => unknown) | undefined> | undefined;
  backend._saveSuperblock = async () => {
    await hooks.beforeSave();
    await save();
  };
  backend.deactivate = async () => {
    try {
      await deactivate();
    } catch {
      for (const step of [
        () => part('_cache')?.deactivate?.(),
        () => part('_mutex')?.release?.(),
        () => part('_idb')?.close?.(),
      ]) {
        try {
          await step();
        } catch {
          // letting go matters more than any one step of it
        }
      }
    } finally {
      hooks.afterLetGo();
    }
  };
  backend.egLetsGo = true;
  return true;
}
