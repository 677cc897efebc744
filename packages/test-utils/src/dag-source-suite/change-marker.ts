import { describe, expect, it } from 'vitest';
import { expectCode, type DagSourceFixture, type SuiteHelpers } from './fixture.js';

/** The optional `changeMarker` part of {@link testDagSource} (issue 22). */
export function changeMarkerTests(f: DagSourceFixture, { chain }: SuiteHelpers): void {
  describe('change marker (optional; issue 22)', () => {
    it('when the source keeps one, every write changes it to a value not seen before, session by session', async (ctx) => {
      const marker = f.source.changeMarker?.bind(f.source);
      if (marker === undefined) return ctx.skip();
      await f.writer.createSession({ id: 's' });
      await f.writer.createSession({ id: 'other' });
      expect(await marker('unknown')).toBeNull();
      const seen = new Set<string | null>();
      const step = async (what: string, write: () => Promise<unknown>) => {
        const otherBefore = await marker('other');
        await write();
        const now = await marker('s');
        expect(now, what).not.toBeNull();
        expect(seen.has(now), `${what}: a marker seen before`).toBe(false);
        seen.add(now);
        // Reading changes nothing; another session's writes leave this one's marker alone.
        expect(await marker('s'), what).toBe(now);
        expect(await marker('other'), what).toBe(otherBefore);
      };
      await step('create', async () => undefined);
      await step('append', () => chain('s', 2));
      await step('fill', () => f.writer.fillNode('s', 'n2', 'filled', { pending: false }));
      await step('head', () => f.writer.setHead('s', 'n1'));
      await step('head back', () => f.writer.setHead('s', null));
      await step('append again', () =>
        f.writer.appendNode({ id: 'n3', session_id: 's', role: 'user', content: 'again', predecessor: 'n2' }),
      );
      // A refused write changes nothing, so it may leave the marker as it was.
      const before = await marker('s');
      await expectCode(
        f.writer.appendNode({ id: 'n3', session_id: 's', role: 'user', content: 'dup' }),
        'DAG_DUPLICATE_ID',
      );
      expect(await marker('s')).toBe(before);
    });
  });
}
