import { EntityGitError, type DagNode, type DagSource, type Session } from '@entity-git/core';
import type { ParsedSession } from './parsed-session.js';

/**
 * A copy of a JSON value as `JSON.parse(JSON.stringify(v))` gives it (a property that is
 * undefined left out, one in an array null, a non-finite number null, -0 as 0), without writing
 * and reading it back: strings are immutable, so they are shared, not copied (measured: a round
 * trip through JSON text serialised and parsed an import's tool outputs again node by node).
 */
function copy<T>(v: T): T {
  return clone(v) as T;
}

function clone(v: unknown): unknown {
  if (typeof v === 'number') return Number.isFinite(v) ? v + 0 : null;
  if (v === null || typeof v !== 'object') return v;
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return JSON.parse(JSON.stringify(v));
  if (Array.isArray(v)) {
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      out[i] = x === undefined || typeof x === 'function' || typeof x === 'symbol' ? null : clone(x);
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  // Keys in order (UTF-16 order, which is code point order but for rare keys): canonical JSON
  // then writes the copy as it is instead of copying it again in order.
  const keys = Object.keys(v);
  // An insertion sort: a node's objects have a few keys, and Array.prototype.sort copies them
  // first (measured: a large share of an import's garbage).
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i]!;
    let j = i;
    for (; j > 0 && keys[j - 1]! > k; j--) keys[j] = keys[j - 1]!;
    keys[j] = k;
  }
  for (const k of keys) {
    const x = (v as Record<string, unknown>)[k];
    if (x === undefined || typeof x === 'function' || typeof x === 'symbol') continue;
    // As JSON.parse makes it: an own `__proto__` key, not the copy's prototype.
    if (k === '__proto__') Object.defineProperty(out, k, { value: clone(x), enumerable: true, writable: true });
    else out[k] = clone(x);
  }
  return out;
}

/**
 * A {@link DagSource} over parsed transcripts. `set` replaces a session with its newest parse
 * (a transcript that grew); the mirror then commits what became complete. Sessions are listed
 * in the order they were first set; a session with no node yet is not listed.
 */
export class TranscriptDag implements DagSource {
  private readonly sessions = new Map<string, ParsedSession>();

  /**
   * Adds or replaces a session. The nodes must be the session's, in seq order 1, 2, 3… (as the
   * parsers give them); otherwise `INVALID_NODE`, and the session keeps its previous parse.
   */
  set(parsed: ParsedSession): void {
    parsed.nodes.forEach((n, i) => {
      if (n.seq !== i + 1 || n.session_id !== parsed.session.id) {
        throw new EntityGitError(
          'INVALID_NODE',
          `node ${JSON.stringify(n.id)} is not seq ${i + 1} of session ${JSON.stringify(parsed.session.id)}`,
          { nodeId: n.id },
        );
      }
    });
    this.sessions.set(parsed.session.id, parsed);
  }

  /** The parse last set for a session, or undefined. */
  get(sessionId: string): ParsedSession | undefined {
    return this.sessions.get(sessionId);
  }

  async listSessions(): Promise<string[]> {
    return [...this.sessions.values()].filter((p) => p.nodes.length > 0).map((p) => p.session.id);
  }

  async getSession(sessionId: string): Promise<Session | null> {
    const p = this.sessions.get(sessionId);
    return p ? copy(p.session) : null;
  }

  async *nodesAfter(sessionId: string, afterSeq = 0): AsyncIterable<DagNode> {
    const nodes = this.sessions.get(sessionId)?.nodes ?? [];
    // Seqs are 1..n in order, so the node after `afterSeq` sits at index `afterSeq`.
    for (let i = Math.max(0, Math.floor(afterSeq)); i < nodes.length; i++) yield copy(nodes[i]!);
  }

  async getHead(sessionId: string): Promise<string | null> {
    return this.sessions.get(sessionId)?.session.head ?? null;
  }
}
