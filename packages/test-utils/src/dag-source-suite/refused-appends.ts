import type { JsonValue, Role } from '@entity-git/core';
import { describe, expect, it } from 'vitest';
import { expectCode, type DagSourceFixture, type SuiteHelpers } from './fixture.js';

/**
 * The `refused appends` part of {@link testDagSource}: unknown sessions, invalid nodes, duplicate
 * ids; a refusal stores nothing.
 */
export function refusedAppendTests(f: DagSourceFixture, { read }: SuiteHelpers): void {
  describe('refused appends', () => {
    it('an append to an unknown session is SESSION_NOT_FOUND', async () => {
      await expectCode(
        f.writer.appendNode({ id: 'x', session_id: 'nope', role: 'user', content: 'x' }),
        'SESSION_NOT_FOUND',
      );
      expect(await read('nope')).toEqual([]);
    });

    it('invalid nodes are refused by code', async () => {
      await f.writer.createSession({ id: 's' });
      const base = { id: 'ok', session_id: 's', role: 'user' as Role, content: 'x' };
      await expectCode(f.writer.appendNode({ ...base, role: 'robot' as Role }), 'INVALID_NODE');
      await expectCode(f.writer.appendNode({ ...base, id: '' }), 'INVALID_ID');
      await expectCode(f.writer.appendNode({ ...base, predecessor: '' }), 'INVALID_ID');
      await expectCode(f.writer.appendNode({ ...base, created_at: Number.POSITIVE_INFINITY }), 'INVALID_NODE');
      await expectCode(
        f.writer.appendNode({ ...base, content: { big: 1n } as unknown as JsonValue }),
        'NON_JSON_VALUE',
      );
      await expectCode(
        f.writer.appendNode({ ...base, metadata: { gone: undefined } as unknown as JsonValue }),
        'NON_JSON_VALUE',
      );
      expect(await read('s')).toEqual([]);
    });

    it('a duplicate node id is DAG_DUPLICATE_ID and the stored node is kept', async () => {
      await f.writer.createSession({ id: 's' });
      await f.writer.appendNode({ id: 'a', session_id: 's', role: 'user', content: 'first' });
      await expectCode(
        f.writer.appendNode({ id: 'a', session_id: 's', role: 'user', content: 'second' }),
        'DAG_DUPLICATE_ID',
      );
      expect((await read('s')).map((n) => [n.id, n.content])).toEqual([['a', 'first']]);
    });

    it('a refused append consumes no seq', async () => {
      await f.writer.createSession({ id: 's' });
      await f.writer.appendNode({ id: 'a', session_id: 's', role: 'user', content: 'x' });
      await expectCode(
        f.writer.appendNode({ id: 'a', session_id: 's', role: 'user', content: 'x' }),
        'DAG_DUPLICATE_ID',
      );
      await expectCode(
        f.writer.appendNode({ id: 'b', session_id: 's', role: 'robot' as Role, content: 'x' }),
        'INVALID_NODE',
      );
      expect((await f.writer.appendNode({ id: 'b', session_id: 's', role: 'assistant', content: 'y' })).seq).toBe(2);
      expect((await read('s')).map((n) => n.seq)).toEqual([1, 2]);
    });
  });
}
