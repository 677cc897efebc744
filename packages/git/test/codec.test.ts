import { portableCodec, sha1OfParts, storedZlib } from '../src/codec/codec.js';
import { objectId } from '../src/objects/frame.js';
import { radixSort } from '../src/pack/pack-index.js';
import { createHash } from 'node:crypto';
import { deflateSync, inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

const bytes = (n: number, seed = 1) => {
  const out = new Uint8Array(n);
  let x = seed;
  for (let i = 0; i < n; i++) out[i] = (x = (x * 1103515245 + 12345) >>> 0) >>> 24;
  return out;
};

describe('the portable codec', () => {
  it.each([0, 1, 200, 4096, 65535, 65536, 200_000])(
    'stores %i bytes as a zlib stream node:zlib reads, and reads it back',
    (n) => {
      const data = bytes(n, n + 7);
      const stored = storedZlib(data);
      expect(Buffer.from(inflateSync(stored)).equals(Buffer.from(data))).toBe(true);
      expect(Buffer.from(portableCodec.inflate(stored)).equals(Buffer.from(data))).toBe(true);
    },
  );

  it('deflates small objects stored, larger ones compressed; both read back by node:zlib and itself', () => {
    for (const n of [10, 4096, 4097, 50_000]) {
      const data = new TextEncoder().encode('tree entry '.repeat(Math.ceil(n / 11)).slice(0, n));
      const z = portableCodec.deflate(data);
      if (n <= 4096) expect(z).toEqual(storedZlib(data));
      else expect(z.length).toBeLessThan(n / 4);
      expect(Buffer.from(inflateSync(z)).equals(Buffer.from(data))).toBe(true);
      expect(Buffer.from(portableCodec.inflate(z)).equals(Buffer.from(data))).toBe(true);
      // And what git (node:zlib at any level) writes reads back too.
      expect(Buffer.from(portableCodec.inflate(deflateSync(data, { level: 0 }))).equals(Buffer.from(data))).toBe(true);
      expect(Buffer.from(portableCodec.inflate(deflateSync(data))).equals(Buffer.from(data))).toBe(true);
    }
  });

  it('refuses a stored stream whose bytes or checksum are damaged, and a truncated one', () => {
    const data = bytes(3000);
    const z = storedZlib(data);
    const flipped = z.slice();
    flipped[100] = flipped[100]! ^ 1;
    expect(() => portableCodec.inflate(flipped)).toThrow();
    expect(() => portableCodec.inflate(z.subarray(0, z.length - 2))).toThrow();
    expect(() => portableCodec.inflate(z.subarray(0, 40))).toThrow();
    expect(() => portableCodec.inflate(new Uint8Array(0))).toThrow();
  });
});

describe('the portable SHA-1', () => {
  it('equals node:crypto on every length from 0 to 300, across block boundaries, and on large inputs', () => {
    const all = bytes(300, 99);
    for (let n = 0; n <= 300; n++) {
      const data = all.subarray(0, n);
      expect(portableCodec.sha1(data), `length ${n}`).toBe(createHash('sha1').update(data).digest('hex'));
    }
    for (const n of [65_536, 1_000_003]) {
      const data = bytes(n, n);
      expect(portableCodec.sha1(data)).toBe(createHash('sha1').update(data).digest('hex'));
    }
    // FIPS 180 test vectors.
    expect(portableCodec.sha1(new TextEncoder().encode('abc'))).toBe('a9993e364706816aba3e25717850c26c9cd0d89d');
    expect(
      portableCodec.sha1(new TextEncoder().encode('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')),
    ).toBe('84983e441c3bd26ebaae4aa1f95129e5e54670f1');
    expect(portableCodec.sha1(new Uint8Array(0))).toBe('da39a3ee5e6b4b0d3255bfef95601890afd80709');
  });

  it("gives git's object ids", () => {
    // `printf 'hello\n' | git hash-object --stdin`
    expect(portableCodec.sha1(new TextEncoder().encode('blob 6\0hello\n'))).toBe(
      'ce013625030ba8dba906f756967f9e9ca394464a',
    );
  });
});

describe('hashing parts and sorting offsets', () => {
  it('sha1OfParts equals the SHA-1 of the parts joined, for a codec without sha1Parts', () => {
    const a = bytes(70, 3);
    const b = bytes(1000, 4);
    const joined = new Uint8Array([...a, ...b]);
    expect(portableCodec.sha1Parts).toBeUndefined();
    expect(sha1OfParts(portableCodec, [a, b])).toBe(createHash('sha1').update(joined).digest('hex'));
    expect(sha1OfParts(portableCodec, [])).toBe(createHash('sha1').digest('hex'));
    // An object's id from its type and content is git's (`git hash-object` of "hello\n").
    expect(objectId(portableCodec, 'blob', new TextEncoder().encode('hello\n'))).toBe(
      'ce013625030ba8dba906f756967f9e9ca394464a',
    );
  });

  it('radixSort orders 32-bit offsets as the built-in numeric sort does, at the ends of the range too', () => {
    for (const n of [0, 1, 2, 1000, 70_000]) {
      const values = new Uint32Array(n);
      let x = n + 1;
      for (let i = 0; i < n; i++) values[i] = x = (x * 1103515245 + 12345) >>> 0;
      if (n > 2) {
        values[0] = 0xffffffff;
        values[1] = 0;
        values[2] = 0x7ff; // one full bucket of the first pass
      }
      const expected = Uint32Array.from(values).sort();
      expect(Array.from(radixSort(values))).toEqual(Array.from(expected));
    }
  });
});
