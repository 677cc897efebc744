import type { DagSource } from '../dag/dag-source.js';
import stableStringify from 'fast-json-stable-stringify';

/** FNV-1a over UTF-16 code units, folded into a running 32-bit state. */
function fold(h: number, text: string): number {
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/**
 * What a session's DAG is now — its row and every node, each as compact JSON with sorted keys
 * (fast-json-stable-stringify: deterministic, which is all a fingerprint needs) — as one short
 * string. Two equal fingerprints mean nothing was appended, filled or moved in between (a change
 * that keeps all 32 bits of every part is not a concern here: reconcile uses it only to tell
 * "written to while checked" from "damaged", and either way the next sync repairs).
 */
export async function dagFingerprint(dag: DagSource, sessionId: string): Promise<string> {
  let h = fold(0x811c9dc5, stableStringify(await dag.getSession(sessionId)));
  let nodes = 0;
  let lastSeq = 0;
  for await (const node of dag.nodesAfter(sessionId, 0)) {
    h = fold(h, stableStringify(node));
    nodes++;
    lastSeq = Math.max(lastSeq, node.seq);
  }
  return `${nodes}:${lastSeq}:${h.toString(16)}`;
}
