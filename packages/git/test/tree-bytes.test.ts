import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { buildTree, entryBytes, extendTree, type TreeEntry } from '../src/objects/tree.js';

// buildTree and extendTree write ASCII entries character by character now; their bytes must stay
// git's: `mode name\0` + the 20-byte oid per entry, in git's order (checked against `git mktree`
// by the golden tests; here against entryBytes, which still encodes every entry through UTF-8).

const oid = (i: number) => createHash('sha1').update(String(i)).digest('hex');
const NAMES = ['a', 'meta.json', 'messages', '000001-u-x.json', 'é', '你好.json', '😀', 'z z', 'A', 'a.b', 'a-b', 'ab'];
const MODES = ['100644', '100755', '40000', '120000', '160000'];

function random(seed: number): (n: number) => number {
  let s = seed;
  return (n) => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % n;
  };
}

/** git's order: bytewise by name, a tree's name compared as if it ended in `/`. */
function expected(entries: readonly TreeEntry[]): Buffer {
  const key = (e: TreeEntry) => Buffer.from(e.mode === '40000' ? `${e.name}/` : e.name);
  const sorted = [...entries].sort((a, b) => Buffer.compare(key(a), key(b)));
  return Buffer.concat(sorted.map((e) => Buffer.from(entryBytes(e))));
}

describe('tree bytes', () => {
  it('buildTree writes ASCII and non-ASCII entries as entryBytes encodes them, in git order', () => {
    const r = random(42);
    for (let k = 0; k < 2000; k++) {
      const used = new Set<string>();
      const entries: TreeEntry[] = [];
      for (let i = r(12); i > 0; i--) {
        const name = `${NAMES[r(NAMES.length)]}${r(3) === 0 ? r(100) : ''}`;
        if (used.has(name)) continue;
        used.add(name);
        entries.push({ mode: MODES[r(MODES.length)]!, name, oid: oid(r(1000)) });
      }
      expect(Buffer.from(buildTree(entries)).equals(expected(entries))).toBe(true);
    }
  });

  it('extendTree adds entries as buildTree writes them, and declines what does not sort after', () => {
    const entries: TreeEntry[] = Array.from({ length: 300 }, (_, i) => ({
      mode: '100644',
      name: `${String(i + 1).padStart(6, '0')}-a-${oid(i).slice(0, 8)}.json`,
      oid: oid(i),
    }));
    let tree = new Uint8Array(0);
    for (let n = 7; n <= entries.length; n += 7) {
      tree = extendTree(tree, entries.slice(0, n), n - 7)!;
      expect(Buffer.from(tree).equals(expected(entries.slice(0, n)))).toBe(true);
    }
    expect(
      extendTree(tree, [...entries, { mode: '100644', name: '000000-u-first.json', oid: oid(1) }], 300),
    ).toBeNull();
    expect(extendTree(tree, [...entries, { mode: '100644', name: '999999-é.json', oid: oid(1) }], 300)).toBeNull();
  });
});
