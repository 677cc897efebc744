import {
  assertId,
  draftNode,
  EntityGitError,
  sessionRow,
  validateNode,
  validateSession,
  type AppendNodeInput,
  type DagNode,
  type Session,
} from '@entity-git/core';
import { PREFIX } from './errors.js';
import { IdbDagReader } from './idb-reads.js';
import {
  bumpRevs,
  decode,
  duplicateId,
  encode,
  firstRev,
  nextRev,
  nodeNotFound,
  nodeOf,
  rowOf,
  sessionNotFound,
  sessionOf,
} from './idb-rows.js';
import { AFTER_NUMBERS, type NodeRow } from './idb-schema.js';

/** The {@link DagWriter} side of {@link IdbDag} (and its bulk and import writes): one read-write transaction each. */
export class IdbDagWriter extends IdbDagReader {
  // ---- DagWriter ----

  async createSession(input: Partial<Session> & { id: string }): Promise<Session> {
    const session = sessionRow(input, this.options.now);
    const metadata = encode(session.metadata);
    await this.write(['sessions'], `creating session ${JSON.stringify(session.id)}`, async (tx) => {
      const store = tx.objectStore('sessions');
      if ((await store.getKey(session.id)) !== undefined) {
        throw new EntityGitError('INVALID_SESSION', `${PREFIX} session ${JSON.stringify(session.id)} exists already`, {
          sessionId: session.id,
        });
      }
      const last = await store.index('by_ord').openCursor(null, 'prev');
      await store.add({ ...session, metadata, ord: (last?.value.ord ?? 0) + 1, rev: firstRev() });
    });
    return { ...session, metadata: decode(metadata) };
  }

  /** Replace a session row's fields (not its id), as MemoryDag's `updateSession`. */
  async updateSession(sessionId: string, patch: Partial<Omit<Session, 'id'>>): Promise<Session> {
    if (typeof patch !== 'object' || patch === null)
      throw new EntityGitError('INVALID_SESSION', `${PREFIX} a session patch must be an object`);
    return this.write(['sessions'], `updating session ${JSON.stringify(sessionId)}`, async (tx) => {
      const store = tx.objectStore('sessions');
      const row = typeof sessionId === 'string' ? await store.get(sessionId) : undefined;
      if (!row) throw sessionNotFound(sessionId);
      const next: Session = { ...sessionOf(row), ...patch, id: row.id };
      validateSession(next);
      const metadata = encode(next.metadata);
      await store.put({ ...next, metadata, ord: row.ord, rev: nextRev(row) });
      return { ...next, metadata: decode(metadata) };
    });
  }

  /** Remove a session and its nodes (for example before importing it again from elsewhere). */
  async deleteSession(sessionId: string): Promise<void> {
    if (typeof sessionId !== 'string') throw sessionNotFound(sessionId);
    await this.write(['sessions', 'nodes'], `deleting session ${JSON.stringify(sessionId)}`, async (tx) => {
      if ((await tx.objectStore('sessions').getKey(sessionId)) === undefined) throw sessionNotFound(sessionId);
      await tx.objectStore('nodes').delete(IDBKeyRange.bound([sessionId, -Infinity], [sessionId, AFTER_NUMBERS]));
      await tx.objectStore('sessions').delete(sessionId);
    });
  }

  async appendNode(input: AppendNodeInput): Promise<DagNode> {
    const [node] = await this.appendNodes([input]);
    return node!;
  }

  /**
   * Append several nodes in one transaction, in order, each with the next seq of its session.
   * All or nothing: one invalid node or duplicate id and none is stored.
   */
  async appendNodes(inputs: readonly AppendNodeInput[]): Promise<DagNode[]> {
    if (!Array.isArray(inputs))
      throw new EntityGitError('INVALID_NODE', `${PREFIX} appendNodes takes an array of nodes`);
    // Each with seq 1, a stand-in: the transaction assigns the real one.
    const drafts = inputs.map((input) => draftNode(input, { now: () => this.options.now(), prefix: PREFIX }));
    if (drafts.length === 0) return [];
    return this.write(['sessions', 'nodes'], 'appending nodes', async (tx) => {
      const nodes = tx.objectStore('nodes');
      const next = new Map<string, number>();
      const taken = new Set<string>();
      const out: DagNode[] = [];
      for (const d of drafts) {
        let seq = next.get(d.session_id);
        if (seq === undefined) {
          if ((await tx.objectStore('sessions').getKey(d.session_id)) === undefined)
            throw sessionNotFound(d.session_id);
          const last = await nodes.openCursor(
            IDBKeyRange.bound([d.session_id, -Infinity], [d.session_id, AFTER_NUMBERS]),
            'prev',
          );
          seq = (last?.value.seq ?? 0) + 1;
        }
        const key = `${d.session_id}\u0000${d.id}`;
        if (taken.has(key) || (await nodes.index('by_id').getKey([d.session_id, d.id])) !== undefined)
          throw duplicateId(d.id);
        taken.add(key);
        const node = { ...d, seq };
        const row = rowOf(node);
        await nodes.add(row);
        next.set(d.session_id, seq + 1);
        out.push(nodeOf(row));
      }
      await bumpRevs(tx.objectStore('sessions'), next.keys());
      return out;
    });
  }

  /** Insert a node exactly as given, seq included (fixtures, imports); as MemoryDag's `addNode`. */
  async addNode(node: DagNode): Promise<DagNode> {
    const [stored] = await this.addNodes([node]);
    return stored!;
  }

  /** {@link IdbDag.addNode} for many nodes, in one transaction: all or nothing. */
  async addNodes(input: readonly DagNode[]): Promise<DagNode[]> {
    if (!Array.isArray(input)) throw new EntityGitError('INVALID_NODE', `${PREFIX} addNodes takes an array of nodes`);
    const rows = input.map((n) => {
      validateNode(n);
      return rowOf(n);
    });
    if (rows.length === 0) return [];
    return this.write(['sessions', 'nodes'], 'adding nodes', async (tx) => {
      const nodes = tx.objectStore('nodes');
      const sessions = new Set<string>();
      const ids = new Set<string>();
      const seqs = new Set<string>();
      for (const row of rows) {
        if (!sessions.has(row.session_id)) {
          if ((await tx.objectStore('sessions').getKey(row.session_id)) === undefined)
            throw sessionNotFound(row.session_id);
          sessions.add(row.session_id);
        }
        const idKey = `${row.session_id}\u0000${row.id}`;
        if (ids.has(idKey) || (await nodes.index('by_id').getKey([row.session_id, row.id])) !== undefined)
          throw duplicateId(row.id);
        const seqKey = `${row.session_id}\u0000${row.seq}`;
        if (seqs.has(seqKey) || (await nodes.getKey([row.session_id, row.seq])) !== undefined) {
          throw new EntityGitError(
            'DAG_DUPLICATE_SEQ',
            `${PREFIX} seq ${row.seq} is used already in session ${JSON.stringify(row.session_id)}`,
            { seq: row.seq, sessionId: row.session_id },
          );
        }
        ids.add(idKey);
        seqs.add(seqKey);
        await nodes.add(row);
      }
      await bumpRevs(tx.objectStore('sessions'), sessions);
      return rows.map(nodeOf);
    });
  }

  /**
   * Make the stored rows equal to `input` (whole nodes, seq included — the rows of another DAG),
   * in one transaction: a node not here is added; a node here with the same seq and id is
   * replaced by the given row (a placeholder filled since); a seq held by another id is
   * `DAG_DUPLICATE_SEQ`, an id held at another seq `DAG_DUPLICATE_ID` (the DAGs diverged).
   * Nodes the input does not mention are kept. All or nothing. Used by `importSession`.
   */
  async mergeNodes(input: readonly DagNode[]): Promise<{ added: number; updated: number; unchanged: number }> {
    if (!Array.isArray(input)) throw new EntityGitError('INVALID_NODE', `${PREFIX} mergeNodes takes an array of nodes`);
    const rows = input.map((n) => {
      validateNode(n);
      return rowOf(n);
    });
    const counts = { added: 0, updated: 0, unchanged: 0 };
    if (rows.length === 0) return counts;
    await this.write(['sessions', 'nodes'], 'merging nodes', async (tx) => {
      const nodes = tx.objectStore('nodes');
      const sessions = new Set<string>();
      for (const row of rows) {
        if (!sessions.has(row.session_id)) {
          if ((await tx.objectStore('sessions').getKey(row.session_id)) === undefined)
            throw sessionNotFound(row.session_id);
          sessions.add(row.session_id);
        }
        const here = await nodes.get([row.session_id, row.seq]);
        if (here && here.id !== row.id) {
          throw new EntityGitError(
            'DAG_DUPLICATE_SEQ',
            `${PREFIX} seq ${row.seq} of session ${JSON.stringify(row.session_id)} is node ${JSON.stringify(here.id)} here, ${JSON.stringify(row.id)} in the rows given`,
            { seq: row.seq, sessionId: row.session_id, here: here.id, given: row.id },
          );
        }
        if (!here) {
          const other = await nodes.index('by_id').getKey([row.session_id, row.id]);
          if (other !== undefined) throw duplicateId(row.id);
          await nodes.add(row);
          counts.added++;
        } else if (JSON.stringify(here) !== JSON.stringify({ ...here, ...row })) {
          await nodes.put(row);
          counts.updated++;
        } else {
          counts.unchanged++;
        }
      }
      if (counts.added + counts.updated > 0) await bumpRevs(tx.objectStore('sessions'), sessions);
    });
    return counts;
  }

  /**
   * A session's rows from another DAG (the row, head included, and its nodes whole, seq
   * included) in ONE transaction, with `importRows`'s semantics: the session made if new, each
   * node added, replaced (same seq and id, other fields) or found equal; a seq held by another id
   * is `DAG_DUPLICATE_SEQ`, an id held at another seq `DAG_DUPLICATE_ID`; nodes only here are
   * kept; the row (head included) taken over last. The session's stored nodes are read with one
   * request and compared in memory, the writes issued together: all or nothing. With
   * `takeRow: false` (a first part of the rows, the rest to come) the row is made if new, head
   * null, and otherwise left as it is: a head is never set before the node it names is in.
   */
  async importSessionRows(
    session: Session,
    input: readonly DagNode[],
    options: { takeRow?: boolean } = {},
  ): Promise<{ created: boolean; added: number; updated: number; unchanged: number; lastSeq: number }> {
    validateSession(session);
    if (!Array.isArray(input))
      throw new EntityGitError('INVALID_NODE', `${PREFIX} importSessionRows takes an array of nodes`);
    const rows = input.map((n) => {
      if (typeof n !== 'object' || n === null || n.session_id !== session.id) {
        throw new EntityGitError(
          'INVALID_NODE',
          `${PREFIX} a node of session ${JSON.stringify((n as DagNode | null)?.session_id)} among the rows of ${JSON.stringify(session.id)}`,
          { nodeId: (n as DagNode | null)?.id ?? null },
        );
      }
      validateNode(n);
      return rowOf(n);
    });
    const id = session.id;
    const metadata = encode(session.metadata);
    const result = { created: false, added: 0, updated: 0, unchanged: 0, lastSeq: 0 };
    await this.write(['sessions', 'nodes'], `importing session ${JSON.stringify(id)}`, async (tx) => {
      const sessions = tx.objectStore('sessions');
      const nodes = tx.objectStore('nodes');
      const row = await sessions.get(id);
      result.created = row === undefined;
      const bySeq = new Map<number, NodeRow>();
      const seqOfId = new Map<string, number>();
      if (row !== undefined)
        for (const r of await nodes.getAll(IDBKeyRange.bound([id, -Infinity], [id, AFTER_NUMBERS]))) {
          bySeq.set(r.seq, r);
          seqOfId.set(r.id, r.seq);
        }
      const writes: Promise<unknown>[] = [];
      for (const r of rows) {
        result.lastSeq = Math.max(result.lastSeq, r.seq);
        const here = bySeq.get(r.seq);
        if (here && here.id !== r.id) {
          throw new EntityGitError(
            'DAG_DUPLICATE_SEQ',
            `${PREFIX} seq ${r.seq} of session ${JSON.stringify(id)} is node ${JSON.stringify(here.id)} here, ${JSON.stringify(r.id)} in the rows given`,
            { seq: r.seq, sessionId: id, here: here.id, given: r.id },
          );
        }
        if (!here) {
          if (seqOfId.has(r.id)) throw duplicateId(r.id);
          writes.push(nodes.add(r));
          result.added++;
        } else if (JSON.stringify(here) !== JSON.stringify({ ...here, ...r })) {
          writes.push(nodes.put(r));
          result.updated++;
        } else {
          result.unchanged++;
          continue;
        }
        bySeq.set(r.seq, r);
        seqOfId.set(r.id, r.seq);
      }
      await Promise.all(writes);
      const takeRow = options.takeRow ?? true;
      if (row === undefined) {
        const last = await sessions.index('by_ord').openCursor(null, 'prev');
        const head = takeRow ? session.head : null;
        await sessions.add({ ...session, head, metadata, ord: (last?.value.ord ?? 0) + 1, rev: firstRev() });
      } else if (takeRow) {
        await sessions.put({ ...session, metadata, ord: row.ord, rev: nextRev(row) });
      } else if (result.added + result.updated > 0) {
        await sessions.put({ ...row, rev: nextRev(row) });
      }
    });
    return result;
  }

  async fillNode(
    sessionId: string,
    nodeId: string,
    content: DagNode['content'],
    metadata?: DagNode['metadata'],
  ): Promise<DagNode> {
    if (typeof sessionId !== 'string' || typeof nodeId !== 'string') throw nodeNotFound(sessionId, nodeId);
    return this.write(['sessions', 'nodes'], `filling node ${JSON.stringify(nodeId)}`, async (tx) => {
      const nodes = tx.objectStore('nodes');
      const row = await nodes.index('by_id').get([sessionId, nodeId]);
      if (!row) throw nodeNotFound(sessionId, nodeId);
      const stored = nodeOf(row);
      const next: DagNode = { ...stored, content, metadata: metadata === undefined ? stored.metadata : metadata };
      validateNode(next);
      const nextRow = rowOf(next);
      await nodes.put(nextRow);
      await bumpRevs(tx.objectStore('sessions'), [sessionId]);
      return nodeOf(nextRow);
    });
  }

  async setHead(sessionId: string, nodeId: string | null): Promise<void> {
    await this.write(['sessions', 'nodes'], `setting the head of session ${JSON.stringify(sessionId)}`, async (tx) => {
      const sessions = tx.objectStore('sessions');
      const row = typeof sessionId === 'string' ? await sessions.get(sessionId) : undefined;
      if (!row) throw sessionNotFound(sessionId);
      if (nodeId !== null) {
        // Same order of checks as MemoryDag: the session, then the id's shape, then the node.
        assertId(nodeId, 'head');
        if ((await tx.objectStore('nodes').index('by_id').getKey([sessionId, nodeId])) === undefined)
          throw nodeNotFound(sessionId, nodeId);
      }
      await sessions.put({ ...row, head: nodeId, rev: nextRev(row) });
    });
  }
}
