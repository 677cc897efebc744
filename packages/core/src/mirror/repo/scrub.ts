import { COMMIT_GRAPH_PATH, toHex, type ObjectStore, idxOids, joinPath, type Store } from '@entity-git/git';
import type { Difference } from '../mirror.js';

/**
 * Damage native git trips over even where the mirror reads around it: a commit-graph failing its
 * checksum (the mirror skips it, `git log` stops at it), a loose object file that does not inflate
 * to its id (the mirror reads a packed copy first, `git fsck` reports the file), a pack whose
 * checksum fails (the objects may still read, `git fsck` reports checksum and CRC mismatches).
 * `inspect` finds them (for verify); `scrub` removes them (for a repair: `sync({ full: true })`),
 * salvaging first every object of a damaged pack that still reads whole, as a loose object, so
 * that after the repair writes what is missing from the DAG `git fsck --strict` is clean.
 */
export interface Damage {
  kind: 'commit-graph' | 'loose-object' | 'pack';
  /** The file, under the git directory. */
  path: string;
  detail: string;
}

const HEX38 = /^[0-9a-f]{38}$/;

function checksumOk(store: Store, bytes: Uint8Array): boolean {
  return (
    bytes.length >= 20 &&
    store.codec.sha1(bytes.subarray(0, bytes.length - 20)) === toHex(bytes.subarray(bytes.length - 20))
  );
}

/** Every damage of the three kinds in the repository at `gitdir`; writes nothing. */
export async function inspectRepository(store: Store, gitdir: string): Promise<Damage[]> {
  const found: Damage[] = [];
  const graph = await store.read(joinPath(gitdir, COMMIT_GRAPH_PATH));
  if (graph !== null && !checksumOk(store, graph))
    found.push({ kind: 'commit-graph', path: COMMIT_GRAPH_PATH, detail: `${COMMIT_GRAPH_PATH} fails its checksum` });
  for (const dir of await store.readdir(joinPath(gitdir, 'objects'))) {
    if (!/^[0-9a-f]{2}$/.test(dir)) continue;
    for (const name of await store.readdir(joinPath(gitdir, 'objects', dir))) {
      if (!HEX38.test(name)) continue;
      const path = `objects/${dir}/${name}`;
      const deflated = await store.read(joinPath(gitdir, path));
      if (deflated === null) continue;
      let ok = false;
      try {
        ok = store.codec.sha1(store.codec.inflate(deflated)) === dir + name;
      } catch {
        ok = false;
      }
      if (!ok)
        found.push({
          kind: 'loose-object',
          path,
          detail: `loose object ${dir}${name} is corrupt (${deflated.length === 0 ? 'empty' : 'does not inflate to its id'})`,
        });
    }
  }
  for (const name of await store.readdir(joinPath(gitdir, 'objects', 'pack'))) {
    if (!name.endsWith('.idx')) continue;
    const base = `objects/pack/${name.slice(0, -4)}`;
    const [idx, pack] = await Promise.all([
      store.read(joinPath(gitdir, `${base}.idx`)),
      store.read(joinPath(gitdir, `${base}.pack`)),
    ]);
    if (idx === null) continue;
    if (
      pack === null ||
      !checksumOk(store, idx) ||
      !checksumOk(store, pack) ||
      toHex(idx.subarray(idx.length - 40, idx.length - 20)) !== toHex(pack.subarray(pack.length - 20))
    ) {
      found.push({
        kind: 'pack',
        path: `${base}.pack`,
        detail: `pack ${base}.pack ${pack === null ? 'is missing' : 'fails its checksum'}`,
      });
    }
  }
  return found;
}

/** `inspectRepository`'s findings as verify's differences. */
export function damageDifferences(damage: readonly Damage[]): Difference[] {
  return damage.map((d) => ({ kind: 'corrupt', detail: `${d.detail} (native git reads it; sync repairs it)` }));
}

/**
 * Remove the damage `inspectRepository` finds, salvaging a damaged pack's objects that still read
 * whole (their hash checked) as loose objects before the pack goes. Objects that do not read are
 * left missing: the repair writes every object the DAG gives again. Returns what was found.
 */
export async function scrubRepository(store: Store, objects: ObjectStore, gitdir: string): Promise<Damage[]> {
  const damage = await inspectRepository(store, gitdir);
  for (const d of damage) {
    if (d.kind !== 'pack') {
      await store.remove(joinPath(gitdir, d.path));
      continue;
    }
    const base = d.path.slice(0, -'.pack'.length);
    const idx = await store.read(joinPath(gitdir, `${base}.idx`));
    const loose: Array<{ type: Parameters<ObjectStore['write']>[0]; content: Uint8Array }> = [];
    for (const oid of (idx === null ? null : idxOids(idx)) ?? []) {
      try {
        loose.push(await objects.read(oid));
      } catch {
        // unreadable here: written again from the DAG by the repair, or reported missing by verify
      }
    }
    for (const o of loose) await objects.write(o.type, o.content);
    // The index first: it is what makes a pack visible.
    for (const ext of ['.idx', '.pack', '.rev', '.bitmap']) await store.remove(joinPath(gitdir, `${base}${ext}`));
    objects.forgetPacks();
  }
  return damage;
}
