// Search over the copies saved in this browser: MiniSearch (an in-memory full-text index) filled
// from the session repositories in LightningFS by core's readRepositoryChanges — what each branch
// gained since the tips last indexed, the same walk the Node index makes — so a hit names the same
// session, branch, turn and commit as on the server. Brought up to date before each query (a
// repository whose tips did not move costs its refs only).
import {
  hasEveryWord,
  matcherOf,
  readRepositoryChanges,
  searchHit,
  searchQuery,
  searchWords,
  type DagNode,
  type HitPlace,
  type RepositoryChanges,
  type SearchHit,
  type SearchQuery,
  type SearchResult,
  type SearchSource,
} from '@entity-git/core';
import { storeFor, type Storage, type Store } from '@entity-git/git';
import MiniSearch from 'minisearch';

interface Doc {
  id: number;
  session: string;
  node: DagNode;
  text: string;
  /** Branch → where the message is on it. */
  places: Map<string, HitPlace>;
}

interface Repo {
  session: string;
  head: string | null;
  tips: Map<string, string>;
}

export class OfflineSearch implements SearchSource {
  readonly #store: Store;
  readonly #root: string;
  // The same words as the Node index: runs of letters, digits and marks, lower-cased, whole.
  readonly #words = new MiniSearch<{ id: number; text: string }>({
    fields: ['text'],
    tokenize: (text) => searchWords(text),
    processTerm: (term) => term,
    searchOptions: { combineWith: 'AND', prefix: false, fuzzy: false },
  });
  readonly #docs = new Map<number, Doc>();
  readonly #byBlob = new Map<string, number>();
  readonly #repos = new Map<string, Repo>();
  #next = 1;
  #updating: Promise<void> | null = null;

  constructor(storage: Storage, root: string) {
    this.#store = storeFor(storage);
    this.#root = root;
  }

  async search(input: SearchQuery): Promise<SearchResult> {
    const q = searchQuery(input);
    await this.update();
    const regex = q.regex === true;
    const matcher = matcherOf(q.text, regex);
    const ids = regex
      ? [...this.#docs.keys()]
      : this.#words.search(searchWords(q.text).join(' ')).map((r) => r.id as number);
    // Newest first, as the Node index: the order the messages were indexed in.
    ids.sort((a, b) => b - a);
    const hits: SearchHit[] = [];
    for (const id of ids) {
      const d = this.#docs.get(id)!;
      const repo = [...this.#repos.values()].find((r) => r.session === d.session)!;
      if (q.session !== undefined && d.session !== q.session) continue;
      if (q.role !== undefined && d.node.role !== q.role) continue;
      const wanted = q.allBranches === true ? null : (q.branch ?? repo.head);
      const places = [...d.places.values()].filter((p) => wanted === null || p.branch === wanted);
      if (places.length === 0) continue;
      matcher.lastIndex = 0;
      if (regex ? !matcher.test(d.text) : !hasEveryWord(d.text, q.text)) continue;
      if (hits.length === q.limit) return { hits, more: true };
      places.sort((a, b) => (a.branch < b.branch ? -1 : 1));
      hits.push(
        searchHit({
          session: d.session,
          head: repo.head,
          asked: q.branch,
          node: d.node,
          text: d.text,
          places,
          matcher,
        }),
      );
    }
    return { hits, more: false };
  }

  /** Reads what the repositories gained since the last update (one update at a time). */
  update(): Promise<void> {
    this.#updating ??= this.#update().finally(() => {
      this.#updating = null;
    });
    return this.#updating;
  }

  async #update(): Promise<void> {
    const dirs = await this.#store.fs.readdir(this.#root).catch(() => [] as string[]);
    for (const name of dirs.sort()) {
      const dir = `${this.#root}/${name}`;
      const known = this.#repos.get(dir);
      const changes = await readRepositoryChanges(this.#store, dir, known?.tips ?? new Map());
      if (changes !== null) this.#apply(dir, changes);
    }
  }

  #apply(dir: string, c: RepositoryChanges): void {
    this.#repos.set(dir, { session: c.session, head: c.head, tips: c.tips });
    const loose = new Set<number>();
    const release = (branch: string) => {
      for (const d of this.#docs.values()) if (d.session === c.session && d.places.delete(branch)) loose.add(d.id);
    };
    for (const branch of c.gone) release(branch);
    for (const b of c.changed) {
      if (b.mode === 'replace') release(b.name);
      for (const m of b.messages) {
        let id = this.#byBlob.get(m.blob);
        if (id === undefined) {
          id = this.#next++;
          this.#byBlob.set(m.blob, id);
          this.#docs.set(id, { id, session: c.session, node: m.node, text: m.text, places: new Map() });
          this.#words.add({ id, text: m.text });
        }
        this.#docs.get(id)!.places.set(b.name, { branch: b.name, turn: m.turn, commit: m.commit });
      }
    }
    for (const id of loose) {
      const d = this.#docs.get(id)!;
      if (d.places.size > 0) continue;
      this.#words.discard(id);
      this.#docs.delete(id);
      for (const [blob, at] of this.#byBlob) if (at === id) this.#byBlob.delete(blob);
    }
  }
}
