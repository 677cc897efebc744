// Generated hostile git objects, as a git host or a hostile repository could hand them back:
// loose files of any bytes, objects whose id matches but whose header or body is nonsense, trees
// and commits of any bytes. Every read gives an object or a typed EntityGitError
// (OBJECT_CORRUPT…), never another throw.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  EntityGitError,
  isEntityGitError,
  memoryStorage,
  ObjectStore,
  parseCommit,
  parseTree,
  portableCodec,
  storeFor,
  type ObjectType,
} from '../src/index.js';

const RUNS = { numRuns: 200 };
const typed = (work: () => unknown): 'ok' | 'typed' => {
  try {
    work();
    return 'ok';
  } catch (err) {
    if (!isEntityGitError(err)) throw err;
    return 'typed';
  }
};
const enc = new TextEncoder();
const join = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};
/** Tree-ish bytes: entries with any mode and name (slashes, dot-dot, NUL-free or not), cut anywhere. */
const treeBytes = fc
  .array(
    fc.tuple(
      fc.constantFrom('100644', '100755', '40000', '120000', '160000', 'x', ''),
      fc.oneof(fc.constantFrom('..', '.git', 'a/b', '/', ''), fc.string({ maxLength: 8 })),
      fc.uint8Array({ minLength: 20, maxLength: 20 }),
    ),
    { maxLength: 5 },
  )
  .chain((entries) => {
    const bytes = join(...entries.map(([m, n, oid]) => join(enc.encode(`${m} ${n}\0`), oid)));
    return fc.nat({ max: bytes.length }).map((cut) => bytes.subarray(0, cut));
  });

describe('git objects, generated', () => {
  it('parseTree and parseCommit: entries or a typed error for any bytes', () => {
    fc.assert(
      fc.property(fc.oneof(treeBytes, fc.uint8Array({ maxLength: 120 })), (bytes) => {
        expect(['ok', 'typed']).toContain(typed(() => parseTree(bytes)));
        expect(['ok', 'typed']).toContain(typed(() => parseCommit(bytes)));
      }),
      RUNS,
    );
  });

  it('a loose object of any bytes, read back: the object its id names, or a typed error', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          // Framed nonsense whose id matches: any header, any body.
          fc.tuple(
            fc.oneof(fc.constantFrom('commit', 'tree', 'blob', 'tag', 'nope'), fc.string({ maxLength: 6 })),
            fc.oneof(treeBytes, fc.uint8Array({ maxLength: 60 })),
            fc.boolean(),
          ),
          // Bytes that are not zlib at all, under a made-up id.
          fc.tuple(fc.constant(null), fc.uint8Array({ maxLength: 60 }), fc.constant(false)),
        ),
        fc.constantFrom<ObjectType>('commit', 'tree', 'blob'),
        async ([type, body, noNul], want) => {
          const storage = memoryStorage();
          const objects = new ObjectStore(storeFor(storage), '/repo/.git');
          const raw =
            type === null
              ? body
              : join(enc.encode(noNul ? `${type} ${body.length}` : `${type} ${body.length}\0`), body);
          const oid = type === null ? 'ab'.repeat(20) : portableCodec.sha1(raw);
          const file = type === null ? body : portableCodec.deflate(raw);
          await storage.fs.mkdir('/repo', {}).catch(() => undefined);
          await storage.fs.mkdir('/repo/.git', {}).catch(() => undefined);
          await storage.fs.mkdir('/repo/.git/objects', {}).catch(() => undefined);
          await storage.fs.mkdir(`/repo/.git/objects/${oid.slice(0, 2)}`, {}).catch(() => undefined);
          await storage.fs.writeFile(`/repo/.git/objects/${oid.slice(0, 2)}/${oid.slice(2)}`, file);
          try {
            const content = await objects.readTyped(oid, want);
            if (want === 'tree') typed(() => parseTree(content));
            if (want === 'commit') typed(() => parseCommit(content));
          } catch (err) {
            expect(err).toBeInstanceOf(EntityGitError);
          }
        },
      ),
      RUNS,
    );
  });
});
