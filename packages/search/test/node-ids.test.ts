import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { DagNode, PlacedMessage } from '@entity-git/core';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { packNodeId, unpackNodeId } from '../src/index-schema.js';
import { indexOpener, tempDir } from './helpers.js';

const indexOf = indexOpener();

// Ids of each kind, with how they are kept and in how many bytes: packed (lowercase UUID, an even
// run of 8 or more lowercase hex digits) or as their text (all else).
const IDS: [string, string, number][] = [
  ['0f8fad5b-d9cb-469f-a165-70867728950e', 'blob', 17],
  ['2fd4e1c67a2d28fced849ee1bb76e7391b93eb12', 'blob', 21],
  ['deadbeef', 'blob', 5],
  ['0F8FAD5B-D9CB-469F-A165-70867728950E', 'text', 36],
  ['2FD4E1C6', 'text', 8],
  ['abc', 'text', 3],
  ['abcdef', 'text', 6],
  ['0f8fad5b-d9cb-469f-a165-70867728950e ', 'text', 37],
  ['s000123-n45', 'text', 11],
  ['msg_01XFDUDYJgAACzvnptvVoYEL', 'text', 28],
  ['ü-0f8fad5b', 'text', 11],
];

describe('node ids in the index', () => {
  it('round-trip exactly, UUIDs and hex as bytes, any other id as its text', () => {
    for (const [id, kind, bytes] of IDS) {
      const kept = packNodeId(id);
      expect(typeof kept === 'string' ? 'text' : 'blob').toBe(kind);
      expect(typeof kept === 'string' ? Buffer.byteLength(kept) : kept.byteLength).toBe(bytes);
      expect(unpackNodeId(kept)).toBe(id);
    }
  });

  it('a hit names each message by its id exactly, whatever its kind; the file keeps the packed ones as bytes', async () => {
    const root = tempDir();
    const index = indexOf(root);
    const messages: PlacedMessage[] = IDS.map(([id], i) => {
      const seq = i + 1;
      const text = `pelican number${seq}`;
      const node = { id, session_id: 's', seq, role: 'user', content: text, predecessor: null } as DagNode;
      const hex = createHash('sha1').update(id).digest('hex');
      return { blob: hex, node, text, turn: seq, commit: hex };
    });
    const tip = messages.at(-1)!.commit;
    index.apply(join(root, 's'), {
      session: 's',
      head: 'main',
      gone: [],
      tips: new Map([['main', tip]]),
      changed: [{ name: 'main', tip, mode: 'replace', messages }],
    });
    const { hits } = await index.search({ text: 'pelican', limit: 100 });
    expect(hits.map((h) => h.node)).toEqual(IDS.map(([id]) => id).reverse());
    for (const [i, [id]] of IDS.entries())
      expect((await index.search({ text: `number${i + 1}` })).hits.map((h) => h.node)).toEqual([id]);
    expect((index.contents().messages as { node: string }[]).map((m) => m.node).sort()).toEqual(
      IDS.map(([id]) => id).sort(),
    );
    const db = new Database(index.file, { readonly: true });
    const kept = db
      .prepare(`SELECT typeof(node) AS kind, length(CAST(node AS BLOB)) AS n FROM docs ORDER BY seq`)
      .all();
    db.close();
    expect(kept).toEqual(IDS.map(([, kind, n]) => ({ kind, n })));
  });
});
