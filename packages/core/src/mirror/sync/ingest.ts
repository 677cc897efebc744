import { EntityGitError, utf8 } from '@entity-git/git';
import { canonicalJson, canonicalJsonBytes } from '../../model/canonical-json.js';
import { nodeFacts } from '../../model/commit-message.js';
import { messageFileName } from '../../model/names.js';
import type { DagNode, Session } from '../../model/types.js';
import { validateNode, validateSession } from '../../model/validate.js';
import type { MirrorContext } from '../context.js';
import { HostYield, yieldToHost } from '../host-yield.js';
import type { Layout } from '../mirror.js';
import type { KeptPlan } from '../repo/cache.js';
import { checkFormat, init, repoLayout } from '../repo/setup.js';
import type { Known, LiveState, StateDelta } from '../repo/state.js';
import { metaOf, type Repo } from '../repo/repo.js';
import type { SessionId } from '../session-id.js';

/**
 * The first phase of a sync: the repository readied (made, scrubbed by a repair, its layout and
 * format known), the state the last sync recorded, and what the DAG holds since.
 */
export interface Ingested {
  sessionId: SessionId;
  repo: Repo;
  /** A repair (`sync({ full: true })`): the caches ignored, every object checked. */
  full: boolean;
  /** The DAG's change marker, read before any row (null: the source keeps none). */
  marker: string | null;
  /** The session row. */
  session: Session;
  /** The repository's layout of `messages/`. */
  layout: Layout;
  /** meta.json's content: the row's immutable fields. */
  metaBytes: Uint8Array;
  /** What the state is recorded under: layout and identity (another's ids differ). */
  config: string;
  /** The state the last sync recorded, as loaded; null without one (or for a repair). */
  loaded: LiveState | null;
  /** The state this sync carries on: `loaded`, or a new one. Its `known` and `lastSeq` include the nodes read. */
  state: LiveState;
  /** What changed in the state, to append to its log. */
  delta: StateDelta;
  /** The nodes that were pending or held by no commit before this sync. */
  unsettled: Set<string>;
  /** The framed blob of every node read that no commit holds yet, by blob id. */
  fresh: Map<string, Uint8Array>;
  /** The last sync's plan, taken out of the cache (put back by the state phase). */
  previous: KeptPlan | undefined;
  /** New nodes in seq order, while every change is a new node newer than all known ones; else null. */
  added: Known[] | null;
  /** Nodes read from the DAG. */
  nodesRead: number;
}

/** The session row, validated (`SESSION_NOT_FOUND` when the DAG has none). */
export async function readSession(ctx: MirrorContext, sessionId: SessionId): Promise<Session> {
  const session = await ctx.dag.getSession(sessionId);
  if (session === null)
    throw new EntityGitError('SESSION_NOT_FOUND', `no session ${JSON.stringify(sessionId)} in the DAG`, {
      sessionId,
    });
  validateSession(session);
  return session;
}

/** What {@link ingest} reads, and how. */
export interface IngestRequest {
  /** The session's repository (its id is the session's). */
  repo: Repo;
  /** A repair: the caches ignored, every object checked. */
  full: boolean;
  /** The nodes from this seq are read again even if a commit holds them. */
  reread?: number | undefined;
  /** The state is not loaded (the whole DAG is read, as when the state is missing). */
  stateless?: boolean;
}

/** Ready the repository, load its state and read the DAG's nodes the state does not settle. */
export async function ingest(ctx: MirrorContext, request: IngestRequest): Promise<Ingested> {
  const { repo, full, reread, stateless = false } = request;
  const { sessionId } = repo;
  // Before any row: a write after this read leaves the marker behind the rows (checked again).
  const marker = (await ctx.dag.changeMarker?.(sessionId)) ?? null;
  const session = await readSession(ctx, sessionId);
  // Each step is short, the steps of one session together are not: the host gets its turns.
  const host = new HostYield(ctx.yieldEveryMs);
  const { layout, metaBytes, config, loaded, state } = await readyRepo(ctx, { repo, session, full, stateless, host });
  const delta: StateDelta = { nodes: new Set(), deleted: new Set(), memo: [] };
  const known = state.known;
  // Re-read from the first node that may still change (a placeholder, or a node of the newest
  // turn where the source says it may) or that no commit holds yet (its turn was incomplete, so
  // its blob was not written).
  const unsettled =
    state.unsettled ?? new Set([...known.values()].filter((n) => n.pending || !n.stored).map((n) => n.id));
  const lastTurn = ctx.dag.lastTurnMayChange === true ? newestTurnStart(known) : undefined;
  const from = Math.min(readFrom(state, unsettled, reread), lastTurn === undefined ? Infinity : lastTurn - 1);

  const previous = ctx.cache.plans.get(repo.gitdir);
  ctx.cache.plans.delete(repo.gitdir);
  const seqBefore = state.lastSeq;
  const read = await readNodes(ctx, {
    sessionId,
    host,
    state,
    delta,
    from,
    appending: previous !== undefined && previous.state === loaded,
  });
  if (read === null) return ingest(ctx, { ...request, stateless: true });
  let added = read.added;
  if (from < seqBefore) {
    for (const n of [...known.values()]) {
      if (n.seq > from && !read.seen.has(n.id)) {
        known.delete(n.id);
        delta.deleted.add(n.id);
        added = null;
      }
    }
  }
  return {
    sessionId,
    repo,
    full,
    marker,
    session,
    layout,
    metaBytes,
    config,
    loaded,
    state,
    delta,
    unsettled,
    fresh: read.fresh,
    previous,
    added,
    nodesRead: read.nodesRead,
  };
}

/** The seq the DAG is read after: the last one recorded, or before the first unsettled node or `reread`. */
function readFrom(state: LiveState, unsettled: ReadonlySet<string>, reread: number | undefined): number {
  let from = state.lastSeq;
  for (const id of unsettled) {
    const n = state.known.get(id);
    if (n) from = Math.min(from, n.seq - 1);
  }
  return reread === undefined ? from : Math.min(from, reread - 1);
}

/**
 * The seq of the first node of the turn the application writes now, or undefined for none: what a
 * source whose last turn may still change has read again (`DagSource.lastTurnMayChange`). That
 * turn is the newest node's, back to its user node; when the newest node is a user node (a new
 * prompt before the reply it follows was written for the last time), the turn before it too.
 * An older branch's last turn is not the application's to write any more: reading it again at
 * every sync would cost a long session with an early retry a read of the whole session.
 */
function newestTurnStart(known: ReadonlyMap<string, Known>): number | undefined {
  let newest: Known | undefined;
  for (const n of known.values()) if (newest === undefined || n.seq > newest.seq) newest = n;
  if (newest === undefined) return undefined;
  let users = newest.role === 'user' ? -1 : 0;
  let seq = newest.seq;
  // Bounded: a malformed chain cannot loop.
  for (let n: Known | undefined = newest, steps = 0; n !== undefined && steps <= known.size; steps++) {
    seq = Math.min(seq, n.seq);
    if (n.role === 'user' && ++users > 0) break;
    n = n.predecessor === null ? undefined : known.get(n.predecessor);
  }
  return seq;
}

/**
 * The repository made or checked (scrubbed first by a repair), its layout and format read, and
 * the state the last sync recorded loaded (none for a repair or `stateless`: a new one).
 */
async function readyRepo(
  ctx: MirrorContext,
  o: { repo: Repo; session: Session; full: boolean; stateless: boolean; host: HostYield },
): Promise<Pick<Ingested, 'layout' | 'metaBytes' | 'config' | 'loaded' | 'state'>> {
  const { repo, session, full, stateless, host } = o;
  await host.due();
  await init(ctx, repo, full);
  await host.due();
  // A repair first removes what native git would trip over; what goes missing is written again below.
  if (full) await (await ctx.onDemand()).scrubRepository(ctx.store, repo.objects, repo.gitdir);
  const layout = await repoLayout(ctx, repo);
  const metaBytes = utf8(canonicalJson(metaOf(session)));
  await checkFormat(ctx, repo);
  const config = `${layout}|${ctx.identity.name}|${ctx.identity.email}`;
  if (full || stateless) ctx.cache.states.forget(repo.gitdir);
  await host.due();
  const loaded = full || stateless ? null : await ctx.cache.states.load(repo.gitdir, repo.refs, config);
  await host.due();
  const state: LiveState = loaded ?? {
    lastSeq: 0,
    tips: {},
    head: null,
    known: new Map(),
    memo: new Map(),
    records: 0,
  };
  return { layout, metaBytes, config, loaded, state };
}

/**
 * Read the DAG's nodes after `from` into `state` and `delta`: the framed blob of each that no
 * commit holds (`fresh`), the ids read (`seen`), and, when `appending` (the last plan carries on),
 * the new nodes in seq order while every change is a new node newer than all known ones (`added`).
 * Null when the source renumbered the session: the caller reads it whole.
 */
async function readNodes(
  ctx: MirrorContext,
  o: { sessionId: SessionId; host: HostYield; state: LiveState; delta: StateDelta; from: number; appending: boolean },
): Promise<{ fresh: Map<string, Uint8Array>; seen: Set<string>; added: Known[] | null; nodesRead: number } | null> {
  const { sessionId, host, state, delta, from, appending } = o;
  const known = state.known;
  const fresh = new Map<string, Uint8Array>();
  const seen = new Set<string>();
  const seqBefore = state.lastSeq;
  let added: Known[] | null = appending ? [] : null;
  let nodesRead = 0;
  for await (const node of ctx.dag.nodesAfter(sessionId, from, { batchSize: ctx.batchSize })) {
    nodesRead++;
    if (host.owed()) await yieldToHost();
    const prev = known.get(node.id);
    // A node known at or below `from` back with another seq: the source renumbered the session
    // (a seq it derives, after a row older than others was written). The session is read whole,
    // as without a state, and the turns whose nodes moved are committed again.
    if (prev && prev.seq <= from && prev.seq !== node.seq) return null;
    const { known: k, bytes, changed } = ingestNode(ctx, { sessionId, seen, known }, node);
    state.lastSeq = Math.max(state.lastSeq, node.seq);
    if (bytes) fresh.set(k.blob, bytes);
    if (changed) {
      if (added !== null && (known.has(k.id) || k.seq <= seqBefore)) added = null;
      known.set(k.id, k);
      delta.nodes.add(k.id);
      added?.push(k);
    }
  }
  return { fresh, seen, added, nodesRead };
}

/** Where {@link ingestNode} takes a node: its session, the ids read so far, the nodes known. */
export interface NodeIntake {
  sessionId: SessionId;
  seen: Set<string>;
  known: ReadonlyMap<string, Known>;
}

/**
 * Validate a node read from the DAG. `changed`: it is new or differs from what is known;
 * `bytes`: its framed blob (`blob <size>\0<file content>`), unless a commit already holds it.
 */
export function ingestNode(
  ctx: MirrorContext,
  intake: NodeIntake,
  node: DagNode,
): { known: Known; bytes: Uint8Array | null; changed: boolean } {
  const { sessionId, seen, known } = intake;
  validateNode(node);
  if (node.session_id !== sessionId) {
    throw new EntityGitError(
      'INVALID_NODE',
      `node ${JSON.stringify(node.id)} belongs to session ${JSON.stringify(node.session_id)}, not ${JSON.stringify(sessionId)}`,
      { nodeId: node.id },
    );
  }
  const prev = known.get(node.id);
  if (seen.has(node.id)) {
    throw new EntityGitError('DAG_DUPLICATE_ID', `node id ${JSON.stringify(node.id)} appears twice`, {
      nodeId: node.id,
    });
  }
  seen.add(node.id);
  const bytes = canonicalJsonBytes(node, (size) => `blob ${size}\0`);
  const blob = ctx.store.codec.sha1(bytes);
  if (prev && prev.blob === blob) return { known: prev, bytes: prev.stored ? null : bytes, changed: false };
  // `stored` is on the object from the start: set later, a property the object lacks would cost
  // each of a backfill's nodes a property store of its own.
  const k: Known = {
    ...nodeFacts(node, ctx.keys, ctx.redaction !== null),
    name: messageFileName(node),
    blob,
    stored: undefined,
  };
  return { known: k, bytes, changed: true };
}
