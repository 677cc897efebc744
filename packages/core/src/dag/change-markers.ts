import type { DagSource } from './dag-source.js';

/**
 * The change markers of `sessionIds` (absent: every session) in the one read of
 * `DagSource.changeMarkers`, for a check of many sessions. Empty when the source has no such read
 * or it failed: each session's own `changeMarker` is then asked where it is needed.
 */
export async function readChangeMarkers(
  dag: DagSource,
  sessionIds?: readonly string[],
): Promise<ReadonlyMap<string, string | null>> {
  if (dag.changeMarkers === undefined) return new Map();
  try {
    const markers = await dag.changeMarkers(sessionIds);
    return markers instanceof Map ? markers : new Map();
  } catch {
    // The seam says a failed read resolves an empty map; a source that rejects gets the same.
    return new Map();
  }
}
