// A DagSource over a JSON-lines file, re-read on every call, so separate processes share one DAG
// (what a SQL database gives in production) without this test depending on a database package.
import type { DagNode, DagSource, Session } from '@entity-git/core';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

export class FileDag implements DagSource {
  constructor(
    private readonly file: string,
    private readonly session: Session,
  ) {}

  static create(file: string, session: Session): FileDag {
    writeFileSync(file, '');
    return new FileDag(file, session);
  }

  /**
   * Add the nodes at once, as a database transaction does: the file is written whole beside and
   * renamed over, so a reader in another process sees all of them or none. (Appended in place, a
   * write crossing a page boundary can be read half done: a turn seen without its last nodes is
   * a complete turn with other messages, committed, then committed again once the rest is read.)
   */
  append(nodes: DagNode[]): void {
    const before = existsSync(this.file) ? readFileSync(this.file, 'utf8') : '';
    const tmp = `${this.file}.tmp-${process.pid}`;
    writeFileSync(tmp, before + nodes.map((n) => `${JSON.stringify(n)}\n`).join(''));
    renameSync(tmp, this.file);
  }

  private nodes(): DagNode[] {
    if (!existsSync(this.file)) return [];
    return readFileSync(this.file, 'utf8')
      .split('\n')
      .filter((l) => l.endsWith('}'))
      .map((l) => JSON.parse(l) as DagNode);
  }

  async listSessions() {
    return [this.session.id];
  }
  async getSession(id: string) {
    return id === this.session.id ? this.session : null;
  }
  async getHead() {
    return null;
  }
  async *nodesAfter(id: string, afterSeq = 0) {
    if (id !== this.session.id) return;
    for (const n of this.nodes()) if (n.seq > afterSeq) yield n;
  }
}

export const fileDagSession = (id: string): Session => ({
  id,
  title: 'shared',
  agent_id: null,
  model: null,
  project_id: null,
  head: null,
  created_at: 1779500000,
  metadata: null,
});

/** The nodes of turn `t` (4 nodes, seqs 4t-3 … 4t), chained after turn t-1. */
export function turnNodes(sessionId: string, t: number): DagNode[] {
  const base = 1779500000 + t * 10;
  const seq = 4 * t - 3;
  const prev = t === 1 ? null : `b${t - 1}`;
  return [
    {
      id: `u${t}`,
      session_id: sessionId,
      seq,
      role: 'user',
      content: `turn ${t}`,
      predecessor: prev,
      caller: null,
      created_at: base,
      metadata: null,
    },
    {
      id: `a${t}`,
      session_id: sessionId,
      seq: seq + 1,
      role: 'assistant',
      content: 'calling',
      predecessor: `u${t}`,
      caller: null,
      created_at: base + 1,
      metadata: null,
    },
    {
      id: `t${t}`,
      session_id: sessionId,
      seq: seq + 2,
      role: 'tool',
      content: 'ok',
      predecessor: `a${t}`,
      caller: `a${t}`,
      created_at: base + 2,
      metadata: { tool: 'read' },
    },
    {
      id: `b${t}`,
      session_id: sessionId,
      seq: seq + 3,
      role: 'assistant',
      content: `done ${t}`,
      predecessor: `t${t}`,
      caller: null,
      created_at: base + 3,
      metadata: null,
    },
  ];
}
