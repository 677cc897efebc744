import type { JsonValue } from '@entity-git/core';
import { describe, expect, it } from 'vitest';
import { expectCode, T0, type DagSourceFixture, type SuiteHelpers } from './fixture.js';

/**
 * The `sessions` part of {@link testDagSource}: createSession's defaults and refusals, getSession,
 * listSessions' order.
 */
export function sessionTests(f: DagSourceFixture, { head }: SuiteHelpers): void {
  describe('sessions', () => {
    it('createSession fills the defaults and getSession returns the stored row', async () => {
      const s = await f.writer.createSession({ id: 'plain' });
      expect(s).toEqual({
        id: 'plain',
        title: null,
        agent_id: null,
        model: null,
        project_id: null,
        head: null,
        created_at: expect.any(Number),
        metadata: null,
      });
      expect(Number.isFinite(s.created_at)).toBe(true);
      expect(await f.source.getSession('plain')).toEqual(s);
    });

    it('createSession keeps every field it is given', async () => {
      const given = {
        id: 'full',
        title: 'Refactor the parser ✨',
        agent_id: 'agent-7',
        model: 'model-x',
        project_id: null,
        head: null,
        created_at: T0 + 0.25,
        metadata: { tags: ['a', 'b'], nested: { depth: 2, ok: true }, n: 1.5 },
      };
      expect(await f.writer.createSession(given)).toEqual(given);
      expect(await f.source.getSession('full')).toEqual(given);
    });

    it('getSession and getHead of an unknown session give null', async () => {
      expect(await f.source.getSession('nope')).toBeNull();
      expect(await head('nope')).toBeNull();
    });

    it('listSessions gives every session in creation order', async () => {
      expect(await f.source.listSessions()).toEqual([]);
      for (const [i, id] of ['m', 'b', 'z', 'a'].entries()) await f.writer.createSession({ id, created_at: T0 + i });
      expect(await f.source.listSessions()).toEqual(['m', 'b', 'z', 'a']);
    });

    it('sessions created back to back with the default created_at also list in creation order', async () => {
      const ids = ['q', 'c', 'x', 'b', 'k', 'a', 'z', 'm'];
      for (const id of ids) await f.writer.createSession({ id });
      expect(await f.source.listSessions()).toEqual(ids);
    });

    it('a second session with an existing id is refused with INVALID_SESSION and the first is kept', async () => {
      const first = await f.writer.createSession({ id: 'dup', title: 'first' });
      await expectCode(f.writer.createSession({ id: 'dup', title: 'second' }), 'INVALID_SESSION');
      expect(await f.source.getSession('dup')).toEqual(first);
      expect(await f.source.listSessions()).toEqual(['dup']);
    });

    it('invalid sessions are refused by code and not stored', async () => {
      await expectCode(f.writer.createSession({ id: '' }), 'INVALID_ID');
      await expectCode(f.writer.createSession({ id: 'bad-title', title: 42 as unknown as string }), 'INVALID_SESSION');
      await expectCode(f.writer.createSession({ id: 'bad-time', created_at: Number.NaN }), 'INVALID_SESSION');
      await expectCode(
        f.writer.createSession({ id: 'bad-meta', metadata: { f: (() => 1) as unknown as JsonValue } }),
        'NON_JSON_VALUE',
      );
      expect(await f.source.listSessions()).toEqual([]);
    });
  });
}
