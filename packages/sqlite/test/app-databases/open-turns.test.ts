import { join } from 'node:path';
import { createNodeMirror } from '@entity-git/node-fs';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqlite } from '../../src/index.js';
import { tempDir } from '../helpers/temp.js';
import { MESSAGES_STEPS, MessagesApp } from './fixtures/messages-db.js';
import { git } from './repo-facts.js';

const tmp = tempDir('entity-git-app-open-');
afterAll(() => tmp.remove());

describe('a turn its application writes row by row', () => {
  it('a reply written between reading a page and asking what continues its prompt holds the turn back, then commits it once', async () => {
    const file = join(tmp.dir, 'race.sqlite');
    const app = new MessagesApp(file, { create: true });
    for (const step of MESSAGES_STEPS.slice(0, 2)) step(app); // s1: the first prompt, no reply yet
    let armed = true;
    const store = await openSqlite({
      file,
      quietMs: Number.POSITIVE_INFINITY, // the fixture's rows are dated in the past: not quiet here

      // Runs once the query has run and before the next one: the application writes the reply
      // right after the page was read.
      log: (event) => {
        if (armed && event.level === 'query' && event.query.sql.includes('row_number() over')) {
          armed = false;
          MESSAGES_STEPS[2]!(app);
        }
      },
    });
    const root = join(tmp.dir, 'race-root');
    const mirror = createNodeMirror({ dag: store.dag, root });
    const first = await mirror.sync('s1');
    expect(armed).toBe(false);
    expect(first.commitsWritten).toBe(0); // the page held the prompt alone: it is still open
    const second = await mirror.sync('s1');
    expect(second.commitsWritten).toBe(1);
    const repo = join(root, 's1');
    expect(git(repo, 'reflog', '--format=%gs', 'main')).toBe('branch: created at turn 1');
    expect(git(repo, 'ls-tree', '--name-only', 'main', 'messages/').split('\n')).toEqual([
      'messages/000001-u-u1.json',
      'messages/000002-a-a1.json',
    ]);
    await store.close();
    app.close();
  });
});
