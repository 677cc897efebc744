import type { ObjectType } from '../objects/frame.js';
import { joinPath } from '../storage/paths.js';
import type { StorageStat } from '../storage/storage.js';
import type { Store } from '../storage/store.js';
import { LoadedPack } from './loaded-pack.js';
import { PackBytes } from './pack-bytes.js';
import { UnsupportedPack } from './pack-index.js';

const packId = (st: StorageStat) => `${st.ino}:${st.size}:${st.mtimeMs}`;

/**
 * The packs of repositories, loaded once and kept (the most recently used few) for as long as
 * their files stay the same: reading a packed object is a binary search in the index and an
 * inflate at its offset, not a parse of the pack per object.
 */
export class PackCache {
  private readonly packs = new Map<string, { id: string; pack: LoadedPack }>();
  /** Per objects/pack directory: the index files it held when last listed. */
  private readonly lists = new Map<string, string[]>();

  // Room for every pack a repository holds between two runs of a packer (up to TURN_PACKS_MAX
  // small ones of its turns, and its big ones): a lookup that misses walks them all.
  constructor(
    private readonly store: Store,
    private readonly maxPacks = 64,
  ) {}

  private async load(path: string): Promise<LoadedPack | null> {
    // A pack is named by its checksum and never rewritten in place: once loaded, it is known
    // (checked against the file again only when it is loaded anew).
    const known = this.packs.get(path);
    if (known) {
      this.packs.delete(path);
      this.packs.set(path, known);
      return known.pack;
    }
    const packPath = path.replace(/\.idx$/, '.pack');
    const st = await this.store.lstat(packPath);
    if (st === null) return null;
    const id = packId(st);
    const idx = await this.store.read(path);
    const pack = idx === null ? null : await PackBytes.open(this.store, packPath, st.size);
    if (idx === null || pack === null) return null;
    let head: Uint8Array;
    try {
      head = await pack.range(0, 12);
    } catch (err) {
      // Removed since its lstat (a packer merged it away): not there, as if not listed.
      if ((await this.store.lstat(packPath)) === null) return null;
      throw err;
    }
    const loaded = new LoadedPack({ path: packPath, idx, pack, head, store: this.store });
    this.packs.set(path, { id, pack: loaded });
    while (this.packs.size > this.maxPacks) this.packs.delete(this.packs.keys().next().value as string);
    return loaded;
  }

  /**
   * Forget what is known of the packs of `gitdir` (the listing and every loaded pack): after a
   * repair removed a damaged pack, a pack kept in memory would still answer for its objects.
   */
  forget(gitdir: string): void {
    const dir = joinPath(gitdir, 'objects', 'pack');
    this.lists.delete(dir);
    for (const path of [...this.packs.keys()]) if (path.startsWith(`${dir}/`)) this.packs.delete(path);
  }

  /** The pack at `path` loaded anew when its file is not the one loaded; else null. */
  private async reload(path: string): Promise<LoadedPack | null> {
    const known = this.packs.get(path);
    const st = await this.store.lstat(path.replace(/\.idx$/, '.pack'));
    if (!known || !st || packId(st) === known.id) return null;
    this.packs.delete(path);
    return this.load(path);
  }

  private async list(gitdir: string, fresh: boolean): Promise<string[]> {
    const dir = joinPath(gitdir, 'objects', 'pack');
    let names = fresh ? undefined : this.lists.get(dir);
    if (names === undefined) {
      names = (await this.store.readdir(dir))
        .filter((n) => n.endsWith('.idx'))
        .sort()
        .map((n) => joinPath(dir, n));
      this.lists.set(dir, names);
      while (this.lists.size > 256) this.lists.delete(this.lists.keys().next().value as string);
    }
    return names;
  }

  /**
   * The objects of `oids` that the packs of `gitdir` already listed hold, each handed to `emit`
   * (its content possibly a view valid during the call only, see {@link LoadedPack.scan}), pack by
   * pack in pack order: a read per span of a pack rather than several per object. Resolves with
   * which indexes were taken by `emit`; the caller reads the others one by one, with
   * {@link read}'s fallbacks and errors — an id no listed pack holds, a copy that failed to read,
   * a null in `oids` (not an object id). The contents are not checked against their ids here.
   */
  async forEach(
    gitdir: string,
    oids: readonly (string | null)[],
    outside: (oid: string) => Promise<{ type: ObjectType; content: Uint8Array }>,
    emit: (i: number, type: ObjectType, content: Uint8Array) => boolean,
  ): Promise<boolean[]> {
    const taken: boolean[] = new Array(oids.length).fill(false);
    const packs: LoadedPack[] = [];
    try {
      for (const path of await this.list(gitdir, false)) {
        const pack = await this.load(path);
        if (pack !== null) packs.push(pack);
      }
    } catch {
      return taken; // a pack this reader does not take, or one gone: each id is read alone
    }
    const byPack: { i: number; at: number }[][] = packs.map(() => []);
    for (let i = 0; i < oids.length; i++) {
      const oid = oids[i];
      if (oid === null || oid === undefined) continue;
      for (let k = 0; k < packs.length; k++) {
        const at = packs[k]!.offsetOf(oid);
        if (at < 0) continue;
        byPack[k]!.push({ i, at });
        break;
      }
    }
    for (let k = 0; k < packs.length; k++) {
      const items = byPack[k]!.sort((x, y) => x.at - y.at);
      if (items.length > 0)
        await packs[k]!.scan(items, outside, (i, type, content) => void (taken[i] = emit(i, type, content)));
    }
    return taken;
  }

  /**
   * The object from the packs of `gitdir`, or null when none holds it. The directory is listed
   * again before giving up, for a pack written since. Throws {@link UnsupportedPack} for a pack
   * it cannot read.
   */
  async read(
    gitdir: string,
    oid: string,
    outside: (oid: string) => Promise<{ type: ObjectType; content: Uint8Array }>,
    relist = true,
  ): Promise<{ type: ObjectType; content: Uint8Array } | null> {
    // A damaged copy in one pack does not hide a good one in another (a repair writes a new pack).
    let damaged: unknown = null;
    for (const fresh of relist ? [false, true] : [false]) {
      for (const path of await this.list(gitdir, fresh)) {
        const pack = await this.load(path);
        if (pack === null) continue;
        const at = pack.offsetOf(oid);
        if (at < 0) continue;
        try {
          return await pack.readAt(at, outside);
        } catch (err) {
          if (err instanceof UnsupportedPack) throw err;
          damaged = err;
        }
        // A damaged pack may have been replaced since it was loaded (a repair writes the same
        // objects, so the same pack name): load it again if the file is another one now.
        const again = await this.reload(path);
        const at2 = again?.offsetOf(oid) ?? -1;
        if (again && at2 >= 0) {
          try {
            return await again.readAt(at2, outside);
          } catch (err) {
            damaged = err;
          }
        }
      }
    }
    if (damaged !== null) throw damaged;
    return null;
  }
}
