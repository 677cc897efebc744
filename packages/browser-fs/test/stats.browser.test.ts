import { createBrowserMirror } from '@entity-git/browser-fs';
import { createActions } from '@entity-git/core';
import { GOLDEN_SESSION, writeGolden } from '@entity-git/test-utils';
import { describe, expect, it } from 'vitest';
import { freshDag, GOLDEN_TIPS, GOLDEN_TURN1, unique } from './helpers.js';

const SID = GOLDEN_SESSION.id;

describe('session_stats in Chromium', () => {
  it('gives the figures node-fs gives, each committed turn naming the commit id Node writes', async () => {
    const dag = await freshDag();
    await writeGolden(dag);
    const mirror = createBrowserMirror({ dag, fsName: unique('fs') });
    await mirror.sync(SID);
    const s = await createActions({ dag, mirror }).session_stats({ session_id: SID });
    expect(s.tokens).toBe(551);
    expect(s.branches.map((b) => [b.name, b.head, b.tokens, b.turns.map((t) => [t.turn, t.tokens, t.commit])])).toEqual(
      [
        [
          'main',
          false,
          510,
          [
            [1, 420, GOLDEN_TURN1],
            [2, 90, GOLDEN_TIPS.main],
            [3, null, null],
          ],
        ],
        [
          'fork-u2e',
          false,
          420,
          [
            [1, 420, GOLDEN_TURN1],
            [2, null, GOLDEN_TIPS['fork-u2e']],
          ],
        ],
        [
          'fork-u4',
          true,
          420,
          [
            [1, 420, GOLDEN_TURN1],
            [2, null, GOLDEN_TIPS['fork-u4']],
          ],
        ],
        [
          'retry-a4r',
          false,
          511,
          [
            [1, 420, GOLDEN_TURN1],
            [2, 91, GOLDEN_TIPS['retry-a4r']],
          ],
        ],
      ],
    );
    await mirror.storage.close();
  });
});
