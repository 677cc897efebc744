import { EntityGitError, fsErrorCode, isEntityGitError } from '../errors.js';
import { loadIsoGit } from './iso-git.js';
import { fromUtf8, joinPath, uniqueSuffix, utf8, type Store } from '../storage/store.js';
import { concatBytes, fromHex, sha1Hex, sha1OfParts, storedZlib, toHex, type Codec } from './codec.js';
import { PackCache, UnsupportedPack } from './pack-reader.js';

export type ObjectType = 'blob' | 'tree' | 'commit' | 'tag';

export interface TreeEntry {
  /** `100644` (file), `100755` (executable), `40000` (tree), `120000` (link), `160000` (gitlink). */
  mode: string;
  name: string;
  oid: string;
}

export interface Identity {
  name: string;
  email: string;
}

export interface CommitFields {
  tree: string;
  parents: string[];
  author: Identity & { time: number };
  committer: Identity & { time: number };
  message: string;
}

const OID = /^[0-9a-f]{40}$/;
export const isOid = (s: unknown): s is string => typeof s === 'string' && OID.test(s);

const encoder = new TextEncoder();

/** UTF-8 length of a string, without encoding it (lone surrogates count as U+FFFD, 3 bytes). */
function utf8Length(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/**
 * The framed blob of a text (`blob <size>\0<utf-8>`). A large text is encoded straight into its
 * frame, so a 100 MB tool output is held once as bytes, not twice.
 */
export function frameText(text: string): Uint8Array {
  if (text.length < 1 << 20) return frame('blob', utf8(text));
  const size = utf8Length(text);
  const header = utf8(`blob ${size}\0`);
  const out = new Uint8Array(header.length + size);
  out.set(header, 0);
  encoder.encodeInto(text, out.subarray(header.length));
  return out;
}

/** The content part of a framed object (no copy). */
export function unframe(raw: Uint8Array): Uint8Array {
  return raw.subarray(raw.indexOf(0) + 1);
}

/**
 * The id git gives a file's bytes (`git hash-object`, no filters): what a tool reports in
 * `writtenBlobs` of the project auto-commit.
 */
export function gitBlobId(content: Uint8Array | string): string {
  return sha1Hex(frame('blob', typeof content === 'string' ? utf8(content) : content));
}

/** An object's id from its type and content: the SHA-1 of its frame, made without copying the content. */
export function objectId(codec: Codec, type: ObjectType, content: Uint8Array): string {
  return sha1OfParts(codec, [utf8(`${type} ${content.length}\0`), content]);
}

/** `<type> <size>\0<content>`, the bytes git hashes. */
export function frame(type: ObjectType, content: Uint8Array): Uint8Array {
  const header = utf8(`${type} ${content.length}\0`);
  const raw = new Uint8Array(header.length + content.length);
  raw.set(header, 0);
  raw.set(content, header.length);
  return raw;
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

// Entry bytes by `mode name oid`: a session's trees repeat the same entries turn after turn.
const entryCache = new Map<string, Uint8Array>();
const ENTRY_CACHE_MAX = 200_000;
const ASCII = /^[\x00-\x7f]*$/;

// And by entry object, for the entries a mirror keeps from one turn to the next (no key to build).
const entryObjects = new WeakMap<TreeEntry, Uint8Array>();

export function entryBytes(e: TreeEntry): Uint8Array {
  const kept = entryObjects.get(e);
  if (kept !== undefined) return kept;
  const key = `${e.mode} ${e.name}\0${e.oid}`;
  let bytes = entryCache.get(key);
  if (bytes === undefined) {
    const head = utf8(`${e.mode} ${e.name}\0`);
    bytes = new Uint8Array(head.length + 20);
    bytes.set(head, 0);
    bytes.set(fromHex(e.oid), head.length);
    if (entryCache.size >= ENTRY_CACHE_MAX) entryCache.clear();
    entryCache.set(key, bytes);
  }
  entryObjects.set(e, bytes);
  return bytes;
}

/**
 * Tree bytes built by hand (measured ~80x cheaper than isomorphic-git's writeTree on 10k entries):
 * entries sorted as git sorts them — bytewise, a tree's name compared as if it ended in `/`.
 */
export function buildTree(entries: readonly TreeEntry[]): Uint8Array {
  const sortKey = (e: TreeEntry) => (e.mode === '40000' ? `${e.name}/` : e.name);
  let ascii = true;
  let inOrder = true;
  for (let i = 0; i < entries.length && ascii; i++) {
    if (!ASCII.test(entries[i]!.name)) ascii = false;
    else if (i > 0 && inOrder && !(sortKey(entries[i - 1]!) < sortKey(entries[i]!))) inOrder = false;
  }
  let sorted: readonly TreeEntry[];
  if (ascii && inOrder) {
    // What a mirror passes: its entries kept in order, so there is nothing to sort.
    sorted = entries;
  } else if (ascii) {
    // For ASCII, UTF-16 order is byte order; message file names are always ASCII.
    sorted = [...entries].sort((a, b) => {
      const x = sortKey(a);
      const y = sortKey(b);
      return x < y ? -1 : x > y ? 1 : 0;
    });
  } else {
    sorted = entries
      .map((e) => ({ e, key: utf8(sortKey(e)) }))
      .sort((a, b) => compareBytes(a.key, b.key))
      .map((k) => k.e);
  }
  return concatBytes(sorted.map(entryBytes));
}

/**
 * `tree` (the bytes of `entries.slice(0, count)`, as {@link buildTree} made them) followed by
 * `entries.slice(count)` — the tree {@link buildTree} would make of all of `entries` when the
 * added entries sort after the kept ones; null when they do not.
 */
export function extendTree(tree: Uint8Array, entries: readonly TreeEntry[], count: number): Uint8Array | null {
  const sortKey = (e: TreeEntry) => (e.mode === '40000' ? `${e.name}/` : e.name);
  for (let i = Math.max(1, count); i < entries.length; i++) {
    if (!ASCII.test(entries[i]!.name) || !(sortKey(entries[i - 1]!) < sortKey(entries[i]!))) return null;
  }
  if (count > 0 && count < entries.length && !ASCII.test(entries[count - 1]!.name)) return null;
  return concatBytes([tree, ...entries.slice(count).map(entryBytes)]);
}

export function parseTree(content: Uint8Array): TreeEntry[] {
  const entries: TreeEntry[] = [];
  let i = 0;
  while (i < content.length) {
    const space = content.indexOf(0x20, i);
    const nul = content.indexOf(0, space);
    if (space < 0 || nul < 0 || nul + 21 > content.length)
      throw new EntityGitError('OBJECT_CORRUPT', 'a tree object is truncated');
    entries.push({
      mode: fromUtf8(content.subarray(i, space)),
      name: fromUtf8(content.subarray(space + 1, nul)),
      oid: toHex(content.subarray(nul + 1, nul + 21)),
    });
    i = nul + 21;
  }
  return entries;
}

function signature(who: Identity & { time: number }): string {
  return `${who.name} <${who.email}> ${who.time} +0000`;
}

export function assertIdentity(who: Identity): void {
  for (const part of [who.name, who.email]) {
    if (typeof part !== 'string' || part.trim() === '' || /[<>\n\0]/.test(part)) {
      throw new EntityGitError(
        'INVALID_OPTION',
        `an identity needs a name and an email without <, >, newline or NUL: ${JSON.stringify(who)}`,
      );
    }
  }
}

export function buildCommit(c: CommitFields): Uint8Array {
  const lines = [
    `tree ${c.tree}`,
    ...c.parents.map((p) => `parent ${p}`),
    `author ${signature(c.author)}`,
    `committer ${signature(c.committer)}`,
  ];
  return utf8(`${lines.join('\n')}\n\n${c.message}`);
}

export interface ParsedCommit {
  tree: string;
  parents: string[];
  author: string;
  committer: string;
  /** Committer time, seconds. */
  time: number;
  message: string;
}

export function parseCommit(content: Uint8Array): ParsedCommit {
  const text = fromUtf8(content);
  const split = text.indexOf('\n\n');
  const head = split < 0 ? text : text.slice(0, split);
  const parsed: ParsedCommit = {
    tree: '',
    parents: [],
    author: '',
    committer: '',
    time: 0,
    message: split < 0 ? '' : text.slice(split + 2),
  };
  for (const line of head.split('\n')) {
    const sp = line.indexOf(' ');
    const key = line.slice(0, sp);
    const value = line.slice(sp + 1);
    if (key === 'tree') parsed.tree = value;
    else if (key === 'parent') parsed.parents.push(value);
    else if (key === 'author') parsed.author = value;
    else if (key === 'committer') {
      parsed.committer = value;
      parsed.time = Number(/ (-?\d+) [+-]\d{4}$/.exec(value)?.[1] ?? 0);
    }
  }
  if (!isOid(parsed.tree)) throw new EntityGitError('OBJECT_CORRUPT', 'a commit object has no tree');
  return parsed;
}

/**
 * Loose objects of one repository. Writes go to a temp file and are renamed into place; an
 * existing object file is re-hashed before it is trusted (isomorphic-git skips a file that
 * exists even when it is empty). Reads take loose objects directly and fall back to
 * isomorphic-git for packed ones.
 */
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

export class ObjectStore {
  private readonly isoFs: { promises: unknown };
  private isoCache: object = {};
  /** Objects actually written (not found intact) since this store was made. */
  written = 0;
  /** Bytes of the loose object files counted in {@link written}, as stored (deflated). */
  writtenBytes = 0;

  constructor(
    private readonly store: Store,
    readonly gitdir: string,
  ) {
    this.isoFs = { promises: store.fs };
  }

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
    if (!unsupported) {
      // Written loose meanwhile, or nowhere.
      const now = await this.readLoose(oid);
      if (now) return now;
      throw new EntityGitError('OBJECT_NOT_FOUND', `object ${oid} is not in the repository`, { oid });
    }
    // A pack this reader does not take (an index of another version than 2): isomorphic-git's.
    for (let attempt = 0; ; attempt++) {
      try {
        const { readObject } = await loadIsoGit();
        const r = await readObject({
          fs: this.isoFs as never,
          gitdir: this.gitdir,
          oid,
          format: 'content',
          cache: this.isoCache,
        });
        return { type: r.type as ObjectType, content: r.object as Uint8Array };
      } catch (err) {
        if (err instanceof EntityGitError) throw err;
        if ((err as { code?: string }).code === 'NotFoundError' || fsErrorCode(err) === 'ENOENT') {
          if (attempt === 0) {
            this.isoCache = {};
            const now = await this.readLoose(oid);
            if (now) return now;
            continue;
          }
          throw new EntityGitError(
            'OBJECT_NOT_FOUND',
            `object ${oid} is not in the repository`,
            { oid },
            { cause: err },
          );
        }
        throw new EntityGitError(
          'OBJECT_CORRUPT',
          `object ${oid} could not be read: ${(err as Error).message}`,
          { oid },
          { cause: err },
        );
      }
    }
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
