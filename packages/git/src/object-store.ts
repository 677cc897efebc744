import { EntityGitError, isEntityGitError } from './errors.js';
import { fromUtf8 } from './bytes/utf8.js';
import { storedZlib } from './codec/codec.js';
import { joinPath, uniqueSuffix } from './storage/paths.js';
import type { Store } from './storage/store.js';
import { frame, isOid, objectId, type ObjectType } from './objects/frame.js';
import { PackCache } from './pack/pack-cache.js';
import { UnsupportedPack } from './pack/pack-index.js';

const packCaches = new WeakMap<Store, PackCache>();
/** The pack cache of a store: every ObjectStore over it shares the packs it has loaded. */
function packsOf(store: Store): PackCache {
  let cache = packCaches.get(store);
  if (cache === undefined) packCaches.set(store, (cache = new PackCache(store)));
  return cache;
}

/** A framed object whose header says `tree`. */
const isTree = (raw: Uint8Array): boolean =>
  raw[0] === 0x74 && raw[1] === 0x72 && raw[2] === 0x65 && raw[3] === 0x65 && raw[4] === 0x20;

/**
 * The objects of one repository. Writes go loose, to a temp file renamed into place; an existing
 * object file is re-hashed before it is trusted (isomorphic-git skips a file that exists even
 * when it is empty). Reads look in the packs already listed (the store's {@link PackCache}), then
 * loose, then in packs listed again. A pack whose index is not version 2 is not read (git has
 * written version 2 since 1.5.2; isomorphic-git does not read version 1 either): an object only
 * it could hold is `OBJECT_CORRUPT`.
 */
export class ObjectStore {
  /** Objects actually written (not found intact) since this store was made. */
  written = 0;
  /** Bytes of the loose object files counted in {@link written}, as stored (deflated). */
  writtenBytes = 0;

  constructor(
    private readonly store: Store,
    readonly gitdir: string,
  ) {}

  hash(type: ObjectType, content: Uint8Array): string {
    return objectId(this.store.codec, type, content);
  }

  /** The id of an already framed object. */
  hashFramed(raw: Uint8Array): string {
    return this.store.codec.sha1(raw);
  }

  private pathOf(oid: string): string {
    return joinPath(this.gitdir, 'objects', oid.slice(0, 2), oid.slice(2));
  }

  /** Forget the packs this store's readers have listed and loaded for this repository (see PackCache.forget). */
  forgetPacks(): void {
    packsOf(this.store).forget(this.gitdir);
  }

  /** Write an object; returns its id. Nothing is written when an intact copy exists. */
  async write(type: ObjectType, content: Uint8Array): Promise<string> {
    const raw = frame(type, content);
    return this.writeRaw(raw, this.store.codec.sha1(raw));
  }

  /** Write an already framed object whose id is known. */
  async writeRaw(raw: Uint8Array, oid: string): Promise<string> {
    const path = this.pathOf(oid);
    const existing = await this.store.read(path);
    if (existing !== null && this.intact(existing, oid)) return oid;
    const dir = joinPath(this.gitdir, 'objects', oid.slice(0, 2));
    // A tree is stored, not compressed: it is mostly object ids, which do not compress, and the
    // flat messages/ tree, tens of kilobytes rewritten every turn, cost more to deflate than all
    // the rest of the turn's objects. Packing compresses it (as a delta of the previous tree).
    const deflated = isTree(raw) ? storedZlib(raw) : this.store.codec.deflate(raw);
    await this.store.writeAtomic(path, deflated, joinPath(dir, `tmp_obj_${uniqueSuffix()}`));
    this.written++;
    this.writtenBytes += deflated.length;
    return oid;
  }

  private intact(deflated: Uint8Array, oid: string): boolean {
    try {
      return this.store.codec.sha1(this.store.codec.inflate(deflated)) === oid;
    } catch {
      return false;
    }
  }

  /** Read an object, loose or packed; the content's hash is checked. */
  async read(oid: string): Promise<{ type: ObjectType; content: Uint8Array }> {
    if (!isOid(oid)) throw new EntityGitError('OBJECT_NOT_FOUND', `not an object id: ${JSON.stringify(oid)}`, { oid });
    const packs = packsOf(this.store);
    let packError: unknown = null;
    let unsupported = false;
    const fromPacks = async (relist: boolean) => {
      if (unsupported) return null;
      try {
        const packed = await packs.read(this.gitdir, oid, (base) => this.read(base), relist);
        if (packed === null) return null;
        const ok = this.checked(oid, packed);
        packError = null;
        return ok;
      } catch (err) {
        if (err instanceof UnsupportedPack) unsupported = true;
        else packError = err;
        return null;
      }
    };
    // The packs already listed first: a lookup in a loaded index costs less than a failed open.
    const packed = await fromPacks(false);
    if (packed) return packed;
    // Loose next, also when a pack's copy is damaged (a loose copy written since repairs it).
    // A damaged loose file does not hide a packed copy written since (a turn's pack over it).
    let looseError: unknown = null;
    const loose = await this.readLoose(oid).catch((err: unknown) => {
      if (!isEntityGitError(err, 'OBJECT_CORRUPT')) throw err;
      looseError = err;
      return null;
    });
    if (loose) return loose;
    // A pack written since the directory was listed (a packer moved the object there), listed
    // again a few times while a read finds its packs gone under it (a packer merging meanwhile).
    let later = await fromPacks(true);
    for (let again = 0; later === null && packError !== null && again < 3; again++) later = await fromPacks(true);
    if (later) return later;
    if (looseError !== null) throw looseError;
    if (packError !== null) throw packError;
    // Written loose meanwhile, or nowhere.
    const now = await this.readLoose(oid);
    if (now) return now;
    if (unsupported)
      throw new EntityGitError(
        'OBJECT_CORRUPT',
        `object ${oid} is not loose, and a pack of the repository has an index of another version than 2, which entity-git does not read (git repack with the default pack.indexVersion rewrites it)`,
        { oid },
      );
    throw new EntityGitError('OBJECT_NOT_FOUND', `object ${oid} is not in the repository`, { oid });
  }

  /** The loose object, its hash checked; null when there is no loose file. */
  private async readLoose(oid: string): Promise<{ type: ObjectType; content: Uint8Array } | null> {
    const deflated = await this.store.read(this.pathOf(oid));
    if (deflated === null) return null;
    let raw: Uint8Array;
    try {
      raw = this.store.codec.inflate(deflated);
    } catch (err) {
      throw new EntityGitError('OBJECT_CORRUPT', `object ${oid} does not inflate`, { oid }, { cause: err });
    }
    if (this.store.codec.sha1(raw) !== oid)
      throw new EntityGitError('OBJECT_CORRUPT', `object ${oid} does not match its id`, { oid });
    const nul = raw.indexOf(0);
    const [type] = fromUtf8(raw.subarray(0, nul)).split(' ');
    return { type: type as ObjectType, content: raw.subarray(nul + 1) };
  }

  private checked(
    oid: string,
    o: { type: ObjectType; content: Uint8Array },
  ): { type: ObjectType; content: Uint8Array } {
    if (objectId(this.store.codec, o.type, o.content) !== oid)
      throw new EntityGitError('OBJECT_CORRUPT', `packed object ${oid} does not match its id`, { oid });
    return o;
  }

  /**
   * Each object of `oids` handed to `fn` with its index, read and checked as {@link readTyped}
   * reads it, in no set order: those in the packs already listed are read together, in pack
   * order, a read per span of a pack rather than several per object (opening a turn reads
   * thousands of small blobs), the rest one by one. `content` may be a view into a buffer that is
   * reused once `fn` returns: copy what is kept.
   */
  async forEachTyped(
    oids: readonly string[],
    type: ObjectType,
    fn: (i: number, content: Uint8Array) => void,
  ): Promise<void> {
    const taken = await packsOf(this.store).forEach(
      this.gitdir,
      oids.map((oid) => (isOid(oid) ? oid : null)),
      (base) => this.read(base),
      (i, t, content) => {
        // A copy that does not match its id is not taken: read alone, where another copy (loose,
        // a pack written since) is looked for, and the error reported when there is none.
        if (objectId(this.store.codec, t, content) !== oids[i]) return false;
        if (t !== type)
          throw new EntityGitError('OBJECT_CORRUPT', `object ${oids[i]} is a ${t}, not a ${type}`, { oid: oids[i] });
        fn(i, content);
        return true;
      },
    );
    for (let i = 0; i < oids.length; i++) if (!taken[i]) fn(i, await this.readTyped(oids[i]!, type));
  }

  /** The contents of `oids`, in order, as {@link readTyped} reads each; read together as {@link forEachTyped} does. */
  async readManyTyped(oids: readonly string[], type: ObjectType): Promise<Uint8Array[]> {
    const out: Uint8Array[] = new Array(oids.length);
    await this.forEachTyped(oids, type, (i, content) => {
      out[i] = content.slice();
    });
    return out;
  }

  async readTyped(oid: string, type: ObjectType): Promise<Uint8Array> {
    const o = await this.read(oid);
    if (o.type !== type)
      throw new EntityGitError('OBJECT_CORRUPT', `object ${oid} is a ${o.type}, not a ${type}`, { oid });
    return o.content;
  }

  async has(oid: string): Promise<boolean> {
    try {
      await this.read(oid);
      return true;
    } catch (err) {
      if (err instanceof EntityGitError && err.code === 'OBJECT_NOT_FOUND') return false;
      throw err;
    }
  }
}
