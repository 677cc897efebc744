// The query form of the mapping on stores no known schema describes, on SQLite and PostgreSQL:
// the same rows give the same commits on both, the tables are never written, and the queries
// are checked at open without reading a row.
import { join } from 'node:path';
import { reconcile } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { type MappingInput, openSqlite } from '../../src/index.js';
import { tempDir } from '../helpers/temp.js';
import { LOG_MAPPING, LOG_SQL, PARTS_MAPPING, PARTS_SQL, T0, TREE_MAPPING, TREE_SQL } from './fixtures/query-stores.js';
import { storesIn, trailer } from './mirror-both.js';
import { assertHealthy, git, refsOf, repoFacts } from './repo-facts.js';

const tmp = tempDir('entity-git-query-form-');
afterAll(() => tmp.remove());
const { sqliteStore, mirrorBoth } = storesIn(tmp.dir);

describe('the query form of the mapping', () => {
  it('a linear log with no parent column and text or timestamp times: one main branch, tools named by a join, the crashed prompt committed', async () => {
    const { report, sqliteRoot, postgresRoot } = await mirrorBoth(LOG_SQL, LOG_MAPPING);
    expect(report).toEqual([
      ['L1', 'backfilled'],
      ['L2', 'empty'],
    ]);
    const repo = join(sqliteRoot, 'L1');
    assertHealthy(repo);
    const facts = repoFacts(repo);
    expect(facts.head).toBe('main');
    expect(Object.keys(facts.branches)).toEqual(['main']);
    expect(facts.branches.main!.files).toEqual([
      'messages/000001-u-1.json',
      'messages/000002-a-2.json',
      'messages/000003-t-3.json',
      'messages/000004-a-4.json',
      'messages/000005-u-5.json',
      'meta.json',
    ]);
    expect(facts.branches.main!.messages).toEqual([
      `turn 1: Weather in Paris?\n\nassistant: Sunny in Paris.\ntools: get_weather\n\n[meta: turn took 3.0s, 1 tool]\n${trailer('L1', '4', 4, 1)}`,
      `turn 2: And tomorrow?\n\n[meta: turn took 0.0s]\n${trailer('L1', '5', 5, 2)}`,
    ]);
    expect(JSON.parse(git(repo, 'show', 'main:messages/000001-u-1.json')).created_at).toBe(T0 + 1);
    expect(refsOf(join(postgresRoot, 'L1'))).toEqual(refsOf(repo));
  });

  it('a message tree in one JSON column per chat: branches from parentId, HEAD from a JSON path, tool parts on tools:, reasoning kept apart', async () => {
    const { report, sqliteRoot, postgresRoot } = await mirrorBoth(TREE_SQL, TREE_MAPPING);
    expect(report).toEqual([
      ['C1', 'backfilled'],
      ['C2', 'empty'],
    ]);
    const repo = join(sqliteRoot, 'C1');
    assertHealthy(repo);
    const facts = repoFacts(repo);
    expect(facts.head).toBe('retry-m3');
    expect(Object.keys(facts.branches).sort()).toEqual(['main', 'retry-m3']);
    expect(facts.branches.main!.files).toEqual(['messages/000001-u-m1.json', 'messages/000002-a-m2.json', 'meta.json']);
    expect(facts.branches['retry-m3']!.files).toEqual([
      'messages/000001-u-m1.json',
      'messages/000003-a-m3.json',
      'messages/000004-u-m4.json',
      'messages/000005-a-m5.json',
      'meta.json',
    ]);
    expect(facts.branches.main!.messages).toEqual([
      `turn 1: Plan a trip\n\nassistant: Go to Nice.\ntools: getWeather\n\n[meta: turn took 1.0s, 1 tool]\n${trailer('C1', 'm2', 2, 1)}`,
    ]);
    const reply = JSON.parse(git(repo, 'show', 'main:messages/000002-a-m2.json'));
    expect([reply.content, reply.metadata]).toEqual([
      'Go to Nice.',
      { inline_tools: ['getWeather'], row: { reasoning: 'Where is it sunny?' } },
    ]);
    expect(JSON.parse(git(repo, 'show', 'refs/entity-git/meta:session.json'))).toMatchObject({ title: 'Trip' });
    expect(refsOf(join(postgresRoot, 'C1'))).toEqual(refsOf(repo));
  });

  it('a parent that is a part of another row id, times in milliseconds: retries and an error reply as branches, HEAD from the chat row', async () => {
    const { report, sqliteRoot, postgresRoot } = await mirrorBoth(PARTS_SQL, PARTS_MAPPING);
    expect(report).toEqual([['K1', 'backfilled']]);
    const repo = join(sqliteRoot, 'K1');
    assertHealthy(repo);
    const facts = repoFacts(repo);
    expect(Object.keys(facts.branches).sort()).toEqual(['fork-K1-f', 'main', 'retry-K1-e']);
    expect(facts.head).toBe('retry-K1-e');
    expect(facts.branches.main!.files).toEqual([
      'messages/000001-u-K1-a.json',
      'messages/000002-a-K1-b.json',
      'messages/000004-u-K1-c.json',
      'messages/000005-a-K1-d.json',
      'meta.json',
    ]);
    expect(facts.branches['fork-K1-f']!.files).toEqual([
      'messages/000001-u-K1-a.json',
      'messages/000003-s-K1-f.json',
      'meta.json',
    ]);
    expect(facts.branches['retry-K1-e']!.commits).toBe(2);
    expect(JSON.parse(git(repo, 'show', 'main:messages/000002-a-K1-b.json')).created_at).toBe(T0 + 2.5);
    expect(refsOf(join(postgresRoot, 'K1'))).toEqual(refsOf(repo));
  });

  it('is checked at open, without reading a row: a query that does not run, a missing column, a write', async () => {
    const file = sqliteStore(LOG_SQL);
    const withNodes = (query: string) => ({ sessions: LOG_MAPPING.sessions, nodes: { query } }) as MappingInput;
    await expect(openSqlite({ file, mapping: withNodes('select * from no_such_table') })).rejects.toMatchObject({
      code: 'INVALID_OPTION',
      data: { key: 'mapping.nodes.query' },
    });
    await expect(
      openSqlite({
        file,
        mapping: withNodes(
          `select cast(n as text) as id, sid as session_id, n as seq, 'user' as role, item as content, null as predecessor, 0 as created_at from log_items where sid = :session_id`,
        ),
      }),
    ).rejects.toMatchObject({ code: 'INVALID_OPTION', data: { key: 'mapping.nodes.query', column: 'caller' } });
    await expect(openSqlite({ file, mapping: withNodes('delete from log_items') })).rejects.toMatchObject({
      code: 'INVALID_OPTION',
      data: { key: 'mapping.nodes.query' },
    });
    await expect(
      openSqlite({ file, mapping: withNodes('select 1 as id; delete from log_items') }),
    ).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    await expect(
      openSqlite({
        file,
        mapping: { sessions: { query: { postgres: 'select 1' } }, nodes: LOG_MAPPING.nodes } as MappingInput,
      }),
    ).rejects.toMatchObject({ code: 'INVALID_OPTION', data: { key: 'mapping.sessions.query.sqlite' } });
  });

  it('a markers query is checked at open like the others, and gives the markers in one statement', async () => {
    const file = sqliteStore(LOG_SQL);
    const withMarkers = (query: unknown): MappingInput => ({ ...LOG_MAPPING, markers: { query } }) as MappingInput;
    await expect(openSqlite({ file, mapping: withMarkers('select * from no_such_table') })).rejects.toMatchObject({
      code: 'INVALID_OPTION',
      data: { key: 'mapping.markers.query' },
    });
    await expect(
      openSqlite({ file, mapping: withMarkers('select sid, count(*) as n from log_items group by sid') }),
    ).rejects.toMatchObject({ code: 'INVALID_OPTION', data: { key: 'mapping.markers.query', column: 'id' } });
    await expect(
      openSqlite({ file, mapping: withMarkers('select sid as id from log_items where sid = :session_id') }),
    ).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    await expect(openSqlite({ file, mapping: withMarkers('update log_items set item = 1') })).rejects.toMatchObject({
      code: 'INVALID_OPTION',
    });
    // Only a PostgreSQL one: on SQLite the markers come from the queries, as without the key.
    const other = await openSqlite({ file, mapping: withMarkers({ postgres: 'select sid as id from log_sessions' }) });
    expect(await other.dag.changeMarker('L1')).toMatch(/^q1\./);
    await other.close();
    const markers = `select s.sid as id, count(i.n) as items, max(i.n) as last_item,
      max(cast(strftime('%s', i.at) as integer)) as newest from log_sessions s left join log_items i on i.sid = s.sid group by s.sid`;
    const store = await openSqlite({ file, mapping: withMarkers({ sqlite: markers }) });
    const before = await store.dag.changeMarkers();
    expect([...before.keys()]).toEqual(['L1', 'L2']);
    for (const marker of before.values()) expect(marker).toMatch(/^m1\./);
    expect(await store.dag.changeMarker('L2')).toBe(before.get('L2'));
    const app = new Database(file);
    app.exec(`insert into log_items (sid, item) values ('L2', '"more"')`);
    app.close();
    const after = await store.dag.changeMarkers(['L1', 'L2', 'L3']);
    expect(after.get('L1')).toBe(before.get('L1'));
    expect(after.get('L2')).not.toBe(before.get('L2'));
    expect(after.get('L3')).toBeNull();
    await store.close();
  });

  it('keeps change markers: computed through the queries, unchanged sessions found unchanged, a changed row seen', async () => {
    const file = sqliteStore(TREE_SQL);
    const root = join(tmp.dir, 'markers');
    const store = await openSqlite({ file, mapping: TREE_MAPPING });
    const mirror = createNodeMirror({ dag: store.dag, root });
    await reconcile({ dag: store.dag, mirror });
    const markers = await store.dag.changeMarkers();
    expect([...markers.keys()].sort()).toEqual(['C1', 'C2']);
    expect([...markers.values()].every((m) => typeof m === 'string')).toBe(true);
    expect(markers.get('C1')).toBe(await store.dag.changeMarker('C1'));
    const again = await reconcile({ dag: store.dag, mirror });
    expect(again.entries.map((e) => e.action)).toEqual(['unchanged', 'unchanged']);
    await store.close();
    const app = new Database(file);
    app.prepare(`update chats set title = 'Trip to Lyon' where id = 'C1'`).run();
    app.close();
    const reopened = await openSqlite({ file, mapping: TREE_MAPPING });
    expect(await reopened.dag.changeMarker('C1')).not.toBe(markers.get('C1'));
    expect(await reopened.dag.changeMarker('C2')).toBe(markers.get('C2'));
    await reopened.close();
  });
});
