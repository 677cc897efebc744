import { describe, expect, it } from 'vitest';
import { expectCode, T0, type DagSourceFixture, type SuiteHelpers } from './fixture.js';

/** The `placeholders` part of {@link testDagSource}: `fillNode`. */
export function placeholderTests(f: DagSourceFixture, { read }: SuiteHelpers): void {
  describe('placeholders', () => {
    it('fillNode replaces content and metadata and keeps the seq and everything else', async () => {
      await f.writer.createSession({ id: 's' });
      await f.writer.appendNode({ id: 'u', session_id: 's', role: 'user', content: 'question', created_at: T0 });
      const ph = await f.writer.appendNode({
        id: 'a',
        session_id: 's',
        role: 'assistant',
        content: '',
        predecessor: 'u',
        created_at: T0 + 1,
        metadata: { pending: true },
      });
      await f.writer.appendNode({
        id: 'u2',
        session_id: 's',
        role: 'user',
        content: 'later',
        predecessor: 'a',
        created_at: T0 + 2,
      });
      const filled = await f.writer.fillNode('s', 'a', { text: 'the answer 🙂' }, { pending: false, tokens: 12 });
      expect(filled).toEqual({ ...ph, content: { text: 'the answer 🙂' }, metadata: { pending: false, tokens: 12 } });
      const got = await read('s');
      expect(got.map((n) => [n.id, n.seq])).toEqual([
        ['u', 1],
        ['a', 2],
        ['u2', 3],
      ]);
      expect(got[1]).toEqual(filled);
      expect(got[0]!.content).toBe('question');
      expect(got[2]!.content).toBe('later');
    });

    it('fillNode without metadata keeps the old metadata; with null it clears it', async () => {
      await f.writer.createSession({ id: 's' });
      await f.writer.appendNode({
        id: 'a',
        session_id: 's',
        role: 'assistant',
        content: '',
        metadata: { pending: true },
      });
      expect((await f.writer.fillNode('s', 'a', 'partial')).metadata).toEqual({ pending: true });
      expect((await read('s'))[0]).toMatchObject({ content: 'partial', metadata: { pending: true } });
      expect((await f.writer.fillNode('s', 'a', 'done', null)).metadata).toBeNull();
      expect((await read('s'))[0]).toMatchObject({ content: 'done', metadata: null, seq: 1 });
    });

    it('fillNode of an unknown node, or of a node in another session, is NODE_NOT_FOUND', async () => {
      await f.writer.createSession({ id: 's' });
      await f.writer.createSession({ id: 'other' });
      await f.writer.appendNode({ id: 'a', session_id: 's', role: 'assistant', content: 'kept' });
      await expectCode(f.writer.fillNode('s', 'missing', 'x'), 'NODE_NOT_FOUND');
      await expectCode(f.writer.fillNode('other', 'a', 'x'), 'NODE_NOT_FOUND');
      await expectCode(f.writer.fillNode('no-session', 'a', 'x'), 'NODE_NOT_FOUND');
      expect((await read('s'))[0]!.content).toBe('kept');
    });
  });
}
