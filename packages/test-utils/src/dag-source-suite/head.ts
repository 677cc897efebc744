import { describe, expect, it } from 'vitest';
import { expectCode, type DagSourceFixture, type SuiteHelpers } from './fixture.js';

/**
 * The `head` part of {@link testDagSource}: `setHead`, read back by `getHead` (or `getSession`
 * without it).
 */
export function headTests(f: DagSourceFixture, { chain, head }: SuiteHelpers): void {
  describe('head', () => {
    it('is null by default; setHead moves it and getSession agrees', async () => {
      await f.writer.createSession({ id: 's' });
      await chain('s', 3);
      expect(await head('s')).toBeNull();
      await f.writer.setHead('s', 'n2');
      expect(await head('s')).toBe('n2');
      expect((await f.source.getSession('s'))!.head).toBe('n2');
      await f.writer.setHead('s', 'n3');
      expect(await head('s')).toBe('n3');
    });

    it('setHead(null) goes back to following the newest leaf', async () => {
      await f.writer.createSession({ id: 's' });
      await chain('s', 2);
      await f.writer.setHead('s', 'n1');
      await f.writer.setHead('s', null);
      expect(await head('s')).toBeNull();
      expect((await f.source.getSession('s'))!.head).toBeNull();
    });

    it('setHead to an unknown node or to a node of another session is NODE_NOT_FOUND, and the head stays', async () => {
      await f.writer.createSession({ id: 's' });
      await f.writer.createSession({ id: 'other' });
      await chain('s', 2);
      await f.writer.appendNode({ id: 'elsewhere', session_id: 'other', role: 'user', content: 'x' });
      await f.writer.setHead('s', 'n1');
      await expectCode(f.writer.setHead('s', 'missing'), 'NODE_NOT_FOUND');
      await expectCode(f.writer.setHead('s', 'elsewhere'), 'NODE_NOT_FOUND');
      expect(await head('s')).toBe('n1');
    });

    it('setHead on an unknown session is SESSION_NOT_FOUND; an empty node id is INVALID_ID', async () => {
      await f.writer.createSession({ id: 's' });
      await expectCode(f.writer.setHead('nope', null), 'SESSION_NOT_FOUND');
      await expectCode(f.writer.setHead('s', ''), 'INVALID_ID');
      expect(await head('s')).toBeNull();
    });
  });
}
