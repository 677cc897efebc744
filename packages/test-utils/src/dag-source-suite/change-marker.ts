import { canonicalJson, type DagNode, type DagSource } from '@entity-git/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  T0,
  expectCode,
  type DagSourceFixture,
  type MarkerEdits,
  type MarkerNode,
  type SuiteHelpers,
} from './fixture.js';

/** A source and the writes of its database, for {@link testChangeMarkers}. */
export interface ChangeMarkerFixture {
  source: DagSource;
  edits: MarkerEdits;
  cleanup?: () => unknown;
}

export interface ChangeMarkerSuiteOptions {
  /** Shown in the suite's title. */
  name: string;
  /** Called before every test; the database must hold no session. */
  create: () => Promise<ChangeMarkerFixture>;
}

/**
 * The change-marker part of {@link testDagSource} alone, for a source whose database another
 * program writes (no `DagWriter`): every kind of write changes the marker, never to a value it had
 * for other contents; `changeMarkers` gives the values `changeMarker` gives.
 */
export function testChangeMarkers(options: ChangeMarkerSuiteOptions): void {
  describe(`change markers: ${options.name}`, () => {
    let f: ChangeMarkerFixture;
    beforeEach(async () => {
      f = await options.create();
    });
    afterEach(async () => {
      await f?.cleanup?.();
    });
    markerWriteTests(() => f);
  });
}

/** The optional `changeMarker` / `changeMarkers` part of {@link testDagSource}, through its writer. */
export function changeMarkerTests(f: DagSourceFixture, { chain }: SuiteHelpers): void {
  describe('change marker (optional)', () => {
    markerWriteTests(() => ({ source: f.source, edits: { ...writerEdits(f), ...f.rowEdits } }));

    it('a refused write changes nothing, so it may leave the marker as it was', async (ctx) => {
      const marker = f.source.changeMarker?.bind(f.source);
      if (marker === undefined) return ctx.skip();
      await f.writer.createSession({ id: 's' });
      await chain('s', 2);
      const before = await marker('s');
      await expectCode(
        f.writer.appendNode({ id: 'n2', session_id: 's', role: 'user', content: 'dup' }),
        'DAG_DUPLICATE_ID',
      );
      expect(await marker('s')).toBe(before);
    });
  });
}

function writerEdits(f: DagSourceFixture): MarkerEdits {
  return {
    createSession: (id, title) => f.writer.createSession({ id, title, created_at: T0 }),
    append: (node) => f.writer.appendNode(node),
    setContent: (sessionId, nodeId, content) => f.writer.fillNode(sessionId, nodeId, content),
    setHead: (sessionId, nodeId) => f.writer.setHead(sessionId, nodeId),
  };
}

/** What the session is as the source reads it: its row and every node, in canonical JSON. */
async function contentsOf(source: DagSource, sessionId: string): Promise<string> {
  const nodes: DagNode[] = [];
  for await (const n of source.nodesAfter(sessionId, 0)) nodes.push(n);
  return canonicalJson({ session: await source.getSession(sessionId), nodes } as never);
}

function markerWriteTests(get: () => ChangeMarkerFixture): void {
  it('each kind of write changes the marker, never to a value it had for other contents; batched, the same values', async (ctx) => {
    const { source, edits } = get();
    if (source.changeMarker === undefined) return ctx.skip();
    const marker = (id: string) => source.changeMarker!(id);
    await edits.createSession('s', 'Marked');
    await edits.createSession('other', 'Other');
    await edits.append(
      node({ session_id: 'other', id: 'o1', role: 'user', content: 'other says 1', predecessor: null, t: 1 }),
    );
    expect(await marker('unknown')).toBeNull();
    const other = await marker('other');
    expect(other).not.toBeNull();

    const seen = new Map<string, string>();
    let previous: string | null = null;
    const step = async (what: string, write: () => Promise<unknown>) => {
      await write();
      const now = await marker('s');
      expect(now, what).not.toBeNull();
      expect(now, `${what}: the marker stayed the same across the write`).not.toBe(previous);
      // A checksum of the rows comes back to a value when the rows do; a revision never does.
      const contents = await contentsOf(source, 's');
      if (seen.has(now!)) expect(contents, `${what}: a marker it had for other contents`).toBe(seen.get(now!));
      seen.set(now!, contents);
      previous = now;
      // Reading changes nothing; another session's writes leave this one's marker alone.
      expect(await marker('s'), what).toBe(now);
      expect(await marker('other'), what).toBe(other);
      await expectBatched(source, what, { s: now!, other: other! });
    };
    await step('create', async () => undefined);
    await step('append', async () => {
      await edits.append(
        node({ session_id: 's', id: 'n1', role: 'user', content: 'user says 1', predecessor: null, t: 1 }),
      );
      await edits.append(
        node({ session_id: 's', id: 'n2', role: 'assistant', content: 'pending', predecessor: 'n1', t: 2 }),
      );
    });
    await step('fill', () => edits.setContent('s', 'n2', 'assistant says 2'));
    await step('an update of the same length', () => edits.setContent('s', 'n2', 'assistant SAYS 2'));
    await step('head', () => edits.setHead('s', 'n1'));
    await step('head back', () => edits.setHead('s', null));
    if (edits.replace) {
      const replace = edits.replace.bind(edits);
      await step('the row saved again with other content', () =>
        replace(
          node({
            session_id: 's',
            id: 'n2',
            role: 'assistant',
            content: 'assistant rewrote 2',
            predecessor: 'n1',
            t: 2,
          }),
        ),
      );
    }
    if (edits.setTitle) {
      const setTitle = edits.setTitle.bind(edits);
      await step('title', () => setTitle('s', 'Renamed'));
    }
    await step('append again', () =>
      edits.append(node({ session_id: 's', id: 'n3', role: 'user', content: 'again', predecessor: 'n2', t: 3 })),
    );
    if (edits.deleteNode) {
      const deleteNode = edits.deleteNode.bind(edits);
      await step('a row deleted', () => deleteNode('s', 'n3'));
    }
  });
}

/** A node of the suite, made `t` seconds after `T0`. */
function node(n: Omit<MarkerNode, 'created_at'> & { t: number }): MarkerNode {
  const { id, session_id, role, content, predecessor, t } = n;
  return { id, session_id, role, content, predecessor, created_at: T0 + t };
}

/** `changeMarkers`, when the source has it: for every session and for those named, the single values. */
async function expectBatched(source: DagSource, what: string, expected: Record<string, string>): Promise<void> {
  if (source.changeMarkers === undefined) return;
  const all = await source.changeMarkers();
  for (const [id, marker] of Object.entries(expected))
    if (all.has(id)) expect(all.get(id), `${what}: ${id}`).toBe(marker);
  const named = await source.changeMarkers([...Object.keys(expected), 'unknown']);
  for (const [id, marker] of Object.entries(expected)) expect(named.get(id), `${what}: ${id} named`).toBe(marker);
  expect(named.get('unknown') ?? null, what).toBeNull();
}
