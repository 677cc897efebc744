// What the paths the watcher saw change come to in the next snapshot's tree, found in-process: the
// same tree `git status` and `update-index` over those paths would stage, with "tracked" meaning
// "in the tip's tree" (the fast path's index may lag behind the tip; a walk first catches the index
// up, so both read one list). Ignore rules are applied as git applies them: info/exclude, then each
// directory's .gitignore (a regular file only, as git reads it), deeper winning, nothing under an
// ignored directory except what is tracked. Where only git can say (a nested repository, a
// submodule, a file that is neither file, link nor directory), the plan refuses and the snapshot
// asks git. docs/design.md §7, "When a snapshot trusts the watcher".
import type { Stats } from 'node:fs';
import { join } from 'node:path';
import {
  buildTree,
  frame,
  type IgnoreStack,
  isIgnored,
  type ObjectStore,
  parseIgnore,
  parseTree,
  type TreeEntry,
} from '@entity-git/git';
import type { Flat } from '../object-engine/status.js';
import { applyToTree } from '../object-engine/commit.js';
import { lstat, readdir, readFile, readlinkBytes } from './shadow-sliced-fs.js';
import { traced } from './shadow-trace.js';

const TREE = '40000';
const GITLINK = '160000';

/**
 * Trees this process read or wrote, by id: an id names the same entries in every repository, so
 * the tip's trees along the next snapshot's paths (most of them the last snapshot's own) are not
 * read again. Bounded; the oldest go first.
 */
const knownTrees = new Map<string, ReadonlyMap<string, TreeEntry>>();
const KNOWN_TREES_MAX = 4_096;

function knowTree(oid: string, entries: ReadonlyMap<string, TreeEntry>): void {
  knownTrees.set(oid, entries);
  if (knownTrees.size > KNOWN_TREES_MAX) knownTrees.delete(knownTrees.keys().next().value as string);
}

/** A directory of the work tree as the plan sees it. */
export interface DirState {
  /** A directory, not a link to one, under directories that are too. */
  readonly real: boolean;
  /** It or a directory above it (below the work tree's root) holds a `.git`. */
  readonly nested: boolean;
  /** It or a directory above it is ignored. */
  readonly ignored: boolean;
  /** The ignore files in force for its entries. */
  readonly stack: IgnoreStack;
}

/** Past this many, the directories known are forgotten at once (a tree's directories touched over a long session). */
const KNOWN_DIRS_MAX = 20_000;

/**
 * What a project's fast plans learnt of its directories (the ignore files in force, a nested
 * repository, whether each is a real directory), kept from one snapshot to the next while the
 * watcher vouches for every interval: each of those facts changes only through an entry of a
 * watched directory (a `.gitignore` or `.git` in it, or the directory itself, made, removed or
 * replaced), whose event names the directory, so a changed path forgets its own state and those
 * under it. The shadow repository's `info/exclude`, which no watch covers, is checked by its
 * identity; any snapshot that walks forgets everything.
 */
export class KnownDirs {
  readonly #states = new Map<string, Promise<DirState>>();
  #exclude: string | null = null;

  get(path: string): Promise<DirState> | undefined {
    return this.#states.get(path);
  }

  set(path: string, state: Promise<DirState>): void {
    if (this.#states.size >= KNOWN_DIRS_MAX) this.#states.clear();
    this.#states.set(path, state);
  }

  /** Forgets what `paths` (changed since the last snapshot) may have changed; all of it when `exclude` (info/exclude's identity) did. */
  forget(paths: readonly string[], exclude: string): void {
    if (exclude !== this.#exclude) {
      this.#exclude = exclude;
      this.#states.clear();
      return;
    }
    for (const path of paths) {
      const under = `${path}/`;
      for (const dir of this.#states.keys()) if (dir === path || dir.startsWith(under)) this.#states.delete(dir);
    }
  }

  clear(): void {
    this.#states.clear();
    this.#exclude = null;
  }
}

export interface FastPlanOptions {
  readonly workdir: string;
  /** The shadow repository's git directory (its `info/exclude` is read). */
  readonly gitDir: string;
  readonly objects: ObjectStore;
  readonly maxFileBytes: number;
  /** The tip's tree: what is tracked. */
  readonly tipTree: string;
  /** The directories' states known from the project's earlier plans, and where this one's go. */
  readonly dirs: KnownDirs;
}

export type PlanResult =
  | {
      /** The snapshot's tree: the tip's with the changes applied. */
      readonly tree: string;
      /** Files left out for their size, among the paths examined. */
      readonly overSizeCap: string[];
      /** Those of them a walk would list again (not ignored). */
      readonly listedAgain: string[];
    }
  | { readonly refused: string };

/** The paths not under another of them: a directory's path is examined whole. */
function outermost(paths: readonly string[]): string[] {
  const set = new Set(paths);
  return [...set].filter((p) => {
    for (let i = p.lastIndexOf('/'); i > 0; i = p.lastIndexOf('/', i - 1)) if (set.has(p.slice(0, i))) return false;
    return true;
  });
}

const parentOf = (path: string) => path.slice(0, Math.max(0, path.lastIndexOf('/')));

export class FastPlan {
  readonly #o: FastPlanOptions;
  readonly #trees = new Map<string, Promise<ReadonlyMap<string, TreeEntry>>>();
  readonly #changes = new Map<string, Flat | null>();
  /** Object writes under way: each object's id is known from its bytes, so none waits for another. */
  readonly #writes: Promise<string>[] = [];
  readonly #overSizeCap: string[] = [];
  #refused: string | null = null;

  constructor(options: FastPlanOptions) {
    this.#o = options;
  }

  async run(paths: readonly string[]): Promise<PlanResult> {
    await traced('plan.paths', () => Promise.all(outermost(paths).map((p) => this.#path(p))));
    if (this.#refused !== null) return { refused: this.#refused };
    const overSizeCap = this.#overSizeCap.sort();
    const [listed, tree] = await Promise.all([
      Promise.all(overSizeCap.map(async (p) => !(await this.#ignoredFile(p)))),
      this.#changes.size === 0
        ? this.#o.tipTree
        : applyToTree(
            {
              // The trees the plan already read; every write starts as soon as its bytes are known
              // (each file system call is a round trip to the thread pool, so none waits for another).
              read: (oid) => this.#tree(oid),
              write: (entries) => {
                const oid = this.#write('tree', buildTree([...entries.values()]));
                knowTree(oid, entries);
                return oid;
              },
            },
            this.#o.tipTree,
            this.#changes,
          ),
    ]);
    const root = tree ?? this.#write('tree', new Uint8Array(0));
    // Every object on disk before the caller writes the commit that names them.
    await traced('plan.writes', () => Promise.all(this.#writes));
    return { tree: root, overSizeCap, listedAgain: overSizeCap.filter((_, i) => listed[i]) };
  }

  /** Starts writing an object; its id at once. */
  #write(type: 'blob' | 'tree', content: Uint8Array): string {
    const raw = frame(type, content);
    const oid = this.#o.objects.hashFramed(raw);
    const write = this.#o.objects.writeRaw(raw, oid);
    // Awaited by run() when it gets that far; a plan refused or failed first leaves none unhandled.
    write.catch(() => undefined);
    this.#writes.push(write);
    return oid;
  }

  #refuse(reason: string): void {
    this.#refused ??= reason;
  }

  #abs(path: string): string {
    return join(this.#o.workdir, path);
  }

  async #path(path: string): Promise<void> {
    // At once: the lstat is kept only when every directory above is a real one.
    const [parent, tip, st] = await Promise.all([
      this.#dir(parentOf(path)),
      this.#tipEntry(path),
      lstat(this.#abs(path)).catch(() => null),
    ]);
    if (parent.nested) return this.#refuse(`${path} is inside a nested repository`);
    await this.#entry(path, parent.real ? st : null, parent, tip);
  }

  /** One entry of the work tree, `st` its lstat (null: gone), `tip` what the tip holds there. */
  async #entry(path: string, st: Stats | null, parent: DirState, tip: TreeEntry | null): Promise<void> {
    if (tip?.mode === GITLINK) return this.#refuse(`${path} is a submodule in the tip`);
    if (st === null) return void this.#changes.set(path, null);
    if (st.isDirectory()) return this.#directory(path, tip);
    if (!st.isFile() && !st.isSymbolicLink()) return this.#refuse(`${path} is neither a file, a link nor a directory`);
    // Tracked files stay whatever the rules say, as in git's index.
    const tracked = tip !== null && tip.mode !== TREE;
    if (!tracked && (parent.ignored || isIgnored(parent.stack, path, false))) return void this.#changes.set(path, null);
    if (st.isFile() && st.size > this.#o.maxFileBytes) {
      this.#overSizeCap.push(path);
      return void this.#changes.set(path, null);
    }
    const data = await (st.isSymbolicLink() ? readlinkBytes(this.#abs(path)) : readFile(this.#abs(path))).catch(
      () => null,
    );
    if (data === null) return void this.#changes.set(path, null); // gone since its lstat
    const oid = this.#write('blob', data);
    // git records the owner's executable bit alone (100755 or 100644).
    const mode = st.isSymbolicLink() ? '120000' : st.mode & 0o100 ? '100755' : '100644';
    this.#changes.set(path, { mode, oid });
  }

  /** A directory: what the tip held under it gives way to what a walk of it finds. */
  async #directory(path: string, tip: TreeEntry | null): Promise<void> {
    const here = await this.#dir(path);
    if (here.nested) return this.#refuse(`${path} holds a nested repository`);
    this.#changes.set(path, null);
    const tipTree = tip?.mode === TREE ? await this.#tree(tip.oid) : null;
    // An ignored directory is walked only for the files the tip tracks in it.
    if (!here.real || (here.ignored && tipTree === null)) return;
    const names = await readdir(this.#abs(path)).catch(() => [] as string[]);
    await Promise.all(
      names.map(async (name) => {
        if (name === '.git') return;
        const child = `${path}/${name}`;
        const tipChild = tipTree?.get(name) ?? null;
        if (here.ignored && tipChild === null) return;
        await this.#entry(child, await lstat(this.#abs(child)).catch(() => null), here, tipChild);
      }),
    );
  }

  async #ignoredFile(path: string): Promise<boolean> {
    const parent = await this.#dir(parentOf(path));
    return parent.ignored || isIgnored(parent.stack, path, false);
  }

  #dir(path: string): Promise<DirState> {
    let state = this.#o.dirs.get(path);
    if (state === undefined) this.#o.dirs.set(path, (state = this.#readDir(path)));
    return state;
  }

  async #readDir(path: string): Promise<DirState> {
    if (path === '') {
      const exclude = await readFile(join(this.#o.gitDir, 'info', 'exclude'), 'utf8').catch(() => '');
      const rules = await this.#rules('');
      const stack: IgnoreStack = [{ dir: '', rules: parseIgnore(exclude) }, ...(rules ? [{ dir: '', rules }] : [])];
      return { real: true, nested: false, ignored: false, stack };
    }
    // Its own look at once with its parent's: what is read through a link is dropped below.
    const [parent, st, git, rules] = await Promise.all([
      this.#dir(parentOf(path)),
      lstat(this.#abs(path)).catch(() => null),
      lstat(join(this.#abs(path), '.git')).catch(() => null),
      this.#rules(path),
    ]);
    if (!parent.real || !st?.isDirectory())
      return { real: false, nested: parent.nested, ignored: parent.ignored, stack: parent.stack };
    return {
      real: true,
      nested: parent.nested || git !== null,
      ignored: parent.ignored || isIgnored(parent.stack, path, true),
      stack: rules ? [...parent.stack, { dir: path, rules }] : parent.stack,
    };
  }

  /** A directory's .gitignore, when it is a regular file (git does not follow a link there). */
  async #rules(dir: string): Promise<ReturnType<typeof parseIgnore> | null> {
    const file = join(this.#abs(dir), '.gitignore');
    const [st, text] = await Promise.all([lstat(file).catch(() => null), readFile(file, 'utf8').catch(() => null)]);
    return st?.isFile() && text !== null ? parseIgnore(text) : null;
  }

  #tree(oid: string): Promise<ReadonlyMap<string, TreeEntry>> {
    let tree = this.#trees.get(oid);
    if (tree === undefined) {
      const known = knownTrees.get(oid);
      tree = known
        ? Promise.resolve(known)
        : this.#o.objects.readTyped(oid, 'tree').then((bytes) => {
            const entries = new Map(parseTree(bytes).map((e) => [e.name, e]));
            knowTree(oid, entries);
            return entries;
          });
      this.#trees.set(oid, tree);
    }
    return tree;
  }

  /** What the tip holds at `path`: an entry, or null. */
  async #tipEntry(path: string): Promise<TreeEntry | null> {
    let tree = this.#o.tipTree;
    const parts = path.split('/');
    for (const [i, name] of parts.entries()) {
      const entry = (await this.#tree(tree)).get(name) ?? null;
      if (entry === null || i === parts.length - 1) return entry;
      if (entry.mode === GITLINK) {
        this.#refuse(`${path} is inside a submodule in the tip`);
        return null;
      }
      if (entry.mode !== TREE) return null;
      tree = entry.oid;
    }
    return null;
  }
}
