// entity-git's own files sit at the root of .git as `entity-git-*` (no directory of their own).
import { createNodeMirror } from '@entity-git/node-fs';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { growingSession, tempDir } from './helpers.js';

describe("entity-git's files at the root of .git", () => {
  it('a fresh repository has no .git/entity-git/ directory; its state and nothing else is entity-git-*', async () => {
    const { dag, turns } = growingSession('Fresh');
    await turns(3);
    const root = tempDir();
    await createNodeMirror({ dag, root }).sync('s');
    const gitdir = join(root, 's', '.git');
    expect(
      readdirSync(gitdir)
        .filter((n) => n.startsWith('entity-git'))
        .sort(),
    ).toEqual(['entity-git-state.json', 'entity-git-state.jsonl']);
  });
});
