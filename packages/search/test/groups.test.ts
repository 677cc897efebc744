import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { MemoryDag, type DagNode, type PlacedMessage, type RepositoryChanges } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { writeGolden } from '@entity-git/test-utils';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { GROUP_CHARS, GROUP_MAX } from '../src/index-schema.js';
import { indexOpener, tempDir } from './helpers.js';

const indexOf = indexOpener();

const sha1 = (s: string) => createHash('sha1').update(s).digest('hex');

/** Message `seq` of session `s` at `turn`: shared words, and one only it has (`only<seq>qz`); `long` makes it ~9 KB. */
function message(seq: number, turn: number, long = false): PlacedMessage {
  const words = Array.from({ length: long ? 2200 : 40 }, (_, j) => `w${(seq * 7 + j * 13) % 97}`).join(' ');
  const text = `pelican ${words} only${seq}qz`;
  const node = {
    id: `m${seq}`,
    session_id: 's',
    seq,
    role: seq % 2 ? 'user' : 'assistant',
    content: text,
    predecessor: null,
    caller: null,
    created_at: 1779500000,
    metadata: null,
  } as DagNode;
  return { blob: sha1(`m${seq}`), node, text, turn, commit: sha1(`turn ${turn}`) };
}

/** `main` committed as `messages` (read whole, as a reader does after a commit again). */
function replaced(messages: PlacedMessage[], tip: string): RepositoryChanges {
  return {
    session: 's',
    head: 'main',
    gone: [],
    tips: new Map([['main', tip]]),
    changed: [{ name: 'main', tip, mode: 'replace', messages }],
  };
}

/** Each row's node id and whether it holds a body, in row order; and every body's texts, inflated. */
function rows(file: string) {
  const db = new Database(file, { readonly: true });
  const dictionary = (
    db.prepare(`SELECT value FROM meta WHERE key = 'dictionary'`).get() as { value: Buffer } | undefined
  )?.value;
  const all = db.prepare(`SELECT node, body FROM docs ORDER BY id`).all() as { node: string; body: Buffer | null }[];
  db.close();
  const bodies = all
    .filter((r) => r.body !== null)
    .map((r) => (dictionary ? inflateRawSync(r.body!, { dictionary }) : inflateRawSync(r.body!)).toString('latin1'));
  return { layout: all.map((r) => `${r.node}${r.body === null ? '' : '*'}`), bodies };
}

describe("a turn's messages deflated together (index version 6)", () => {
  it("keeps a turn's new messages in one body, reads each exactly, and keeps a group again without the messages it drops", async () => {
    const root = tempDir();
    const dir = join(root, 's');
    const index = indexOf(root);
    // Turn 1: three messages; turn 2: two.
    const all = [message(1, 1), message(2, 1), message(3, 1), message(4, 2), message(5, 2)];
    expect(index.apply(dir, replaced(all, sha1('a')))).toEqual({ sessions: 1, added: 5, removed: 0 });
    expect(rows(index.file).layout).toEqual(['m1*', 'm2', 'm3', 'm4*', 'm5']);
    for (const m of all) {
      const { hits } = await index.search({ text: `only${m.node.seq}qz` });
      expect(hits.map((h) => [h.node, h.turn, h.commit])).toEqual([[m.node.id, m.turn, m.commit]]);
      expect(hits[0]!.snippet.endsWith(`only${m.node.seq}qz`)).toBe(true);
    }
    expect((await index.search({ text: 'pelican', limit: 10 })).hits.map((h) => h.node)).toEqual([
      'm5',
      'm4',
      'm3',
      'm2',
      'm1',
    ]);

    // Committed again without m2 (inside a group) and m4 (a group's first): each group kept
    // again without them, in its first row left; no body holds their text any more.
    const kept = [all[0]!, all[2]!, all[4]!];
    expect(index.apply(dir, replaced(kept, sha1('b')))).toEqual({ sessions: 1, added: 0, removed: 2 });
    const after = rows(index.file);
    expect(after.layout).toEqual(['m1*', 'm3', 'm5*']);
    expect(after.bodies.some((b) => b.includes('only2qz') || b.includes('only4qz'))).toBe(false);
    expect(after.bodies.map((b) => ['only1qz', 'only3qz', 'only5qz'].filter((w) => b.includes(w)))).toEqual([
      ['only1qz', 'only3qz'],
      ['only5qz'],
    ]);
    expect((await index.search({ text: 'only2qz' })).hits).toEqual([]);
    expect((await index.search({ text: 'pelican', limit: 10 })).hits.map((h) => h.node)).toEqual(['m5', 'm3', 'm1']);

    // The same as an index given that state at once.
    const fresh = indexOf(root, { file: join(tempDir(), 'fresh.db') });
    fresh.apply(dir, replaced(kept, sha1('b')));
    expect(fresh.contents()).toEqual(index.contents());
    expect(rows(fresh.file).layout).toEqual(['m1*', 'm3', 'm5*']);
  });

  it(`holds at most ${GROUP_MAX} messages and about ${GROUP_CHARS} characters a group`, async () => {
    const root = tempDir();
    const dir = join(root, 's');
    const index = indexOf(root);
    // One turn of 20 messages, the 18th ~9 KB long: 16, then 1, then the long one alone, then 2.
    const turn = Array.from({ length: 20 }, (_, k) => message(k + 1, 1, k === 17));
    index.apply(dir, replaced(turn, sha1('c')));
    const { layout } = rows(index.file);
    expect(layout.filter((r) => r.endsWith('*'))).toEqual(['m1*', 'm17*', 'm18*', 'm19*']);
    expect(layout).toHaveLength(20);
    for (const k of [1, 16, 17, 18, 20]) {
      const { hits } = await index.search({ text: `only${k}qz` });
      expect(hits.map((h) => h.node)).toEqual([`m${k}`]);
    }
    // The long message dropped: the groups before and after it are as they were.
    index.apply(dir, replaced([...turn.slice(0, 17), ...turn.slice(18)], sha1('d')));
    expect(rows(index.file).layout.filter((r) => r.endsWith('*'))).toEqual(['m1*', 'm17*', 'm19*']);
    expect((await index.search({ text: 'only20qz' })).hits.map((h) => h.node)).toEqual(['m20']);
  });

  it('groups the same messages when it follows syncs and when it is rebuilt from the repositories', async () => {
    const dag = new MemoryDag();
    const root = tempDir();
    const mirror = createNodeMirror({ dag, root });
    const index = indexOf(root);
    // Turns of tool calls and results, a retry, an edited message and a continue-from-an-old-turn.
    for (const s of ['golden-1', 'golden-2']) {
      await writeGolden(dag, { sessionId: s });
      await index.afterSync(await mirror.sync(s));
    }
    const rebuilt = indexOf(root, { file: join(tempDir(), 'rebuilt.db') });
    await rebuilt.reindex();
    expect(rebuilt.contents()).toEqual(index.contents());
    const live = groupsOf(index.file);
    expect(groupsOf(rebuilt.file)).toEqual(live);
    // Each group is one turn's messages on the branch that brought them: one turn, one commit.
    const turnOf = new Map(
      (index.contents().messages as { session: string; node: string; places: string[] }[]).map((m) => [
        `${m.session}/${m.node}`,
        m.places[0]!.split(' ').slice(1).join(' '),
      ]),
    );
    for (const g of live) {
      const [session, nodes] = g.split(': ') as [string, string];
      expect(new Set(nodes.split(' ').map((n) => turnOf.get(`${session}/${n}`))).size).toBe(1);
    }
    expect(live.some((g) => g.split(' ').length > 3)).toBe(true);
    expect(live.reduce((n, g) => n + g.split(' ').length - 1, 0)).toBe(index.contents().messages.length);
  });
});

/** A file's groups: each as its session and its messages' node ids in row order, sorted. */
function groupsOf(file: string): string[] {
  const db = new Database(file, { readonly: true });
  const rows = db
    .prepare(
      `SELECT s.session, d.node, d.body IS NULL AS member FROM docs d JOIN sessions s ON s.id = d.session ORDER BY d.id`,
    )
    .all() as { session: string; node: string; member: number }[];
  db.close();
  const groups: string[] = [];
  for (const r of rows) {
    if (r.member) groups[groups.length - 1] += ` ${r.node}`;
    else groups.push(`${r.session}: ${r.node}`);
  }
  return groups.sort();
}
