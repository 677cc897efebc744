import type { DagSource } from '../dag/dag-source.js';
import type { DagNode, Session } from '../model/types.js';
import type { Redactor } from './redactor.js';

/**
 * The DAG as the mirror reads it when redaction is on: nodes and the session row with their
 * secrets replaced, everything else the source's own. The source is only read, never written —
 * the DAG keeps its secrets; only what the mirror builds from it (files, commit messages, the
 * meta ref) is redacted.
 */
export class RedactingDag implements DagSource {
  readonly source: DagSource;
  readonly redactor: Redactor;

  constructor(source: DagSource, redactor: Redactor) {
    this.source = source;
    this.redactor = redactor;
    const s = source;
    if (s.getHead) this.getHead = (id) => s.getHead!(id);
    if (s.changeMarker) this.changeMarker = (id) => s.changeMarker!(id);
    if (s.changeMarkers) this.changeMarkers = (ids) => s.changeMarkers!(ids);
  }

  getHead?: DagSource['getHead'];
  changeMarker?: DagSource['changeMarker'];
  changeMarkers?: DagSource['changeMarkers'];

  listSessions(): Promise<string[]> {
    return this.source.listSessions();
  }

  async getSession(sessionId: string): Promise<Session | null> {
    const row = await this.source.getSession(sessionId);
    return row === null ? null : this.redactor.redactSession(row);
  }

  async *nodesAfter(sessionId: string, afterSeq?: number, options?: { batchSize?: number }): AsyncIterable<DagNode> {
    for await (const node of this.source.nodesAfter(sessionId, afterSeq, options))
      yield await this.redactor.redactNode(node);
  }
}

/** `dag` read through `redactor`; a source already redacted by an equal configuration is kept as it is. */
export function redactingDag(dag: DagSource, redactor: Redactor): DagSource {
  return dag instanceof RedactingDag && JSON.stringify(dag.redactor.options) === JSON.stringify(redactor.options)
    ? dag
    : new RedactingDag(dag, redactor);
}
