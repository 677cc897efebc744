import { EntityGitError } from '@entity-git/git';
import type { DagSource } from '../dag/dag-source.js';
import type { DagNode, Session } from '../model/types.js';
import type { RedactionOptions } from './redaction-options.js';
import type { Redactor } from './redactor.js';

/**
 * The DAG as the mirror reads it when redaction is on: nodes and the session row with their
 * secrets replaced, everything else the source's own. The source is only read, never written —
 * the DAG keeps its secrets; only what the mirror builds from it (files, commit messages, the
 * meta ref) is redacted. The redactor is loaded on first read (redactor.ts, then secretlint's
 * preset), so a page's first load carries neither.
 */
export class RedactingDag implements DagSource {
  readonly source: DagSource;
  /** The configuration, checked (`checkRedaction`). */
  readonly options: Readonly<Required<RedactionOptions>>;
  #redactor: Promise<Redactor> | null = null;

  constructor(source: DagSource, options: Readonly<Required<RedactionOptions>>) {
    this.source = source;
    this.options = options;
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
    return row === null ? null : (await this.#load()).redactSession(row);
  }

  async *nodesAfter(sessionId: string, afterSeq?: number, options?: { batchSize?: number }): AsyncIterable<DagNode> {
    const redactor = await this.#load();
    for await (const node of this.source.nodesAfter(sessionId, afterSeq, options))
      yield await redactor.redactNode(node);
  }

  #load(): Promise<Redactor> {
    this.#redactor ??= import('./redactor.js').then(
      (m) => new m.Redactor(this.options),
      (err: unknown) => {
        this.#redactor = null;
        throw new EntityGitError(
          'REDACTION_UNAVAILABLE',
          `the redactor cannot load here (${String(err)}): nothing was written`,
          {},
          { cause: err },
        );
      },
    );
    return this.#redactor;
  }
}

/** `dag` read through a redactor of `options`; a source already redacted by an equal configuration is kept as it is. */
export function redactingDag(dag: DagSource, options: Readonly<Required<RedactionOptions>>): DagSource {
  return dag instanceof RedactingDag && JSON.stringify(dag.options) === JSON.stringify(options)
    ? dag
    : new RedactingDag(dag, options);
}
