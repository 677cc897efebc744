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
    // The one optional method the mirror calls (the change marker): present when the source's is.
    if (source.changeMarker) this.changeMarker = (id) => source.changeMarker!(id);
    this.lastTurnMayChange = source.lastTurnMayChange === true;
  }

  changeMarker?: DagSource['changeMarker'];
  readonly lastTurnMayChange: boolean;

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
        throw new EntityGitError('REDACTION_UNAVAILABLE', String(err), {}, { cause: err });
      },
    );
    return this.#redactor;
  }
}

/** `dag` read through a redactor of `options`; one read so already (verify's fresh mirror) is kept as it is. */
export const redactingDag = (dag: DagSource, options: Readonly<Required<RedactionOptions>>): DagSource =>
  dag instanceof RedactingDag ? dag : new RedactingDag(dag, options);
