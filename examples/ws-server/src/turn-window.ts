// Replay's step (`turn_messages`) served from memory: a session's rows around the turn asked for
// are read once, `readAhead` turns beyond the window asked for on each side, and the next steps
// (prev, next, a near jump) are answered from them while the session's change marker stays the
// same. A source without markers (or a session without one) is read each time, as core does.
import {
  EntityGitError,
  idParam,
  intParam,
  invalidArgument,
  paramsObject,
  type ActionMap,
  type DagNode,
  type DagSource,
} from '@entity-git/core';

/** Turns read beyond the window asked for, on each side. */
export const DEFAULT_READ_AHEAD = 8;
/** Sessions whose window is kept: the most recently stepped through. */
const WINDOWS_KEPT = 32;
/** Seqs a turn is taken to span before a read has counted (a message, a reply, a few tool calls). */
const FIRST_GUESS = 5;

type TurnMessages = ActionMap['turn_messages'];

interface Window {
  marker: string;
  /** The rows with lo < seq <= hi, all of them, by id. */
  lo: number;
  hi: number;
  rows: Map<string, DagNode>;
  /** Seqs per turn among these rows (per user message). */
  perTurn: number;
}

/** The messages of the path ending at `toNode` among `rows` (seq in (from, to]), as core's handler picks them. */
function pathOf(rows: Iterable<DagNode>, fromSeq: number, toSeq: number, toNode: string): DagNode[] | null {
  const range = new Map<string, DagNode>();
  for (const n of rows) if (n.seq > fromSeq && n.seq <= toSeq) range.set(n.id, n);
  if (!range.has(toNode)) return null;
  const chain = new Set<string>();
  for (let n = range.get(toNode); n !== undefined; n = n.predecessor === null ? undefined : range.get(n.predecessor))
    chain.add(n.id);
  return [...range.values()]
    .filter((n) => chain.has(n.id) || (n.role === 'tool' && n.caller !== null && chain.has(n.caller)))
    .sort((a, b) => a.seq - b.seq);
}

/**
 * `turn_messages` over `dag` with a read-ahead window per session; `fallback` (core's handler)
 * answers whatever the window cannot: no marker, invalid parameters, a node not there.
 */
export function turnWindow(
  dag: DagSource,
  fallback: (params: TurnMessages['params']) => Promise<TurnMessages['result']>,
  readAhead = DEFAULT_READ_AHEAD,
): (params: TurnMessages['params']) => Promise<TurnMessages['result']> {
  if (!Number.isSafeInteger(readAhead) || readAhead < 0)
    throw new TypeError('[ws-server] readAhead must be a whole number of turns, 0 or more');
  const windows = new Map<string, Window>();
  return async (params) => {
    if (readAhead === 0 || dag.changeMarker === undefined) return fallback(params);
    let sessionId: string;
    let toNode: string;
    let toSeq: number;
    let fromSeq: number;
    try {
      const p = paramsObject(params);
      sessionId = idParam(p, 'session_id');
      toNode = idParam(p, 'to_node');
      toSeq = intParam(p, 'to_seq', { fallback: -1, min: 1 });
      fromSeq = intParam(p, 'from_seq', { fallback: 0, min: 0 });
      if (toSeq < 0) invalidArgument('to_seq must be given', { param: 'to_seq' });
    } catch (err) {
      if (err instanceof EntityGitError) return fallback(params);
      throw err;
    }
    const marker = await dag.changeMarker(sessionId);
    if (marker === null) return fallback(params);
    let w = windows.get(sessionId);
    windows.delete(sessionId);
    if (w === undefined || w.marker !== marker || fromSeq < w.lo || toSeq > w.hi) {
      const margin = readAhead * (w?.marker === marker ? w.perTurn : FIRST_GUESS);
      const lo = Math.max(0, fromSeq - margin);
      const hi = toSeq + margin;
      const rows = new Map<string, DagNode>();
      let users = 0;
      for await (const n of dag.nodesAfter(sessionId, lo)) {
        if (n.seq > hi) break;
        rows.set(n.id, n);
        if (n.role === 'user') users++;
      }
      // Rows read after the marker: a write since makes the next marker differ, and the window is read again.
      w = { marker, lo, hi, rows, perTurn: Math.max(1, Math.ceil((hi - lo) / Math.max(1, users))) };
    }
    windows.set(sessionId, w);
    while (windows.size > WINDOWS_KEPT) windows.delete(windows.keys().next().value as string);
    const messages = pathOf(w.rows.values(), fromSeq, toSeq, toNode);
    // Not there (or another session's id): core's handler gives the typed error.
    if (messages === null) return fallback(params);
    return { session_id: sessionId, messages };
  };
}
