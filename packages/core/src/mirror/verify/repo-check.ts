import { isEntityGitError, readIndex, type IndexEntry, joinPath } from '@entity-git/git';
import type { BranchPlan, Derivation } from '../../model/derive.js';
import type { MirrorContext } from '../context.js';
import type { HostYield } from '../host-yield.js';
import { headFileSteps, messagePath } from '../layout.js';
import type { CommitInfo, Difference, Layout } from '../mirror.js';
import { configReadable } from '../repo/config.js';
import { damageDifferences, inspectRepository } from '../repo/scrub.js';
import type { Known } from '../repo/state.js';
import { messageEntries, readCommitTree, walk, type Repo } from '../repo/repo.js';
import { worktreeDamage, worktreeDifferences } from '../worktree-check.js';

/** What a {@link RepoCheck} compares: one session's repository, in its layout, giving the host turns. */
export interface RepoCheckTarget {
  ctx: MirrorContext;
  repo: Repo;
  layout: Layout;
  host: HostYield;
}

/**
 * The comparisons of a repository with a derived DAG that need no DAG read of their own: each
 * adds what it finds to `differences`, in the order verify reports them.
 */
export class RepoCheck {
  readonly differences: Difference[] = [];
  readonly #ctx: MirrorContext;
  readonly #repo: Repo;
  readonly #layout: Layout;
  readonly #host: HostYield;

  constructor(target: RepoCheckTarget) {
    this.#ctx = target.ctx;
    this.#repo = target.repo;
    this.#layout = target.layout;
    this.#host = target.host;
  }

  /** True while nothing but `extra-branch` was found. */
  get ok(): boolean {
    return this.differences.every((d) => d.kind === 'extra-branch');
  }

  /** Compare one derived branch with the repository by trailers and message blobs. */
  async branch(b: BranchPlan<Known>): Promise<void> {
    const tip = await this.#tipOf(b);
    if (tip === null) return;
    let chain: CommitInfo[];
    try {
      chain = (await walk(this.#repo, tip)).reverse();
    } catch (err) {
      this.#objectError(b.name, err);
      return;
    }
    const expectTurns = b.turns.slice(0, b.complete);
    for (let k = 0; k < Math.max(chain.length, expectTurns.length); k++) {
      if (k % 256 === 255) await this.#host.due();
      const c = chain[k];
      const t = expectTurns[k];
      const last = t?.nodes.reduce((x, y) => (y.seq > x.seq ? y : x));
      if (!c || !t || !last || c.turn !== t.index || c.node !== last.id || c.seq !== last.seq) {
        this.differences.push({
          kind: 'branch-differs',
          branch: b.name,
          expected: last ? `turn ${t!.index} ending at ${last.id}` : null,
          actual: c ? `turn ${c.turn} ending at ${c.node}` : null,
          detail: `branch ${b.name} differs from the DAG at turn ${k + 1} (${chain.length} commits, ${expectTurns.length} turns expected)`,
        });
        return;
      }
    }
    await this.tipMessages(b, tip);
  }

  /** The branch's ref (null, with the difference added, when it is missing or damaged). */
  async #tipOf(b: BranchPlan<Known>): Promise<string | null> {
    let tip: string | null;
    try {
      tip = await this.#repo.refs.resolve(`refs/heads/${b.name}`);
    } catch (err) {
      this.differences.push({ kind: 'corrupt', branch: b.name, detail: (err as Error).message });
      return null;
    }
    if (tip === null)
      this.differences.push({
        kind: 'missing-branch',
        branch: b.name,
        detail: `branch ${b.name} (${b.complete} turns) is missing`,
      });
    return tip;
  }

  #objectError(branch: string, err: unknown): void {
    this.differences.push({
      kind: isEntityGitError(err, 'OBJECT_NOT_FOUND') ? 'missing-object' : 'corrupt',
      branch,
      detail: (err as Error).message,
    });
  }

  /** The messages at `tip` against the nodes of `b`'s complete turns, each blob present. */
  async tipMessages(b: BranchPlan<Known>, tip: string): Promise<void> {
    const expected = new Map<string, string>();
    for (const t of b.turns.slice(0, b.complete))
      for (const n of t.nodes) expected.set(messagePath(this.#layout, n), n.blob);
    await this.#host.due();
    try {
      const root = await readCommitTree(this.#repo.objects, tip);
      const messages = root.find((e) => e.name === 'messages');
      const actual = messages ? await messageEntries(this.#repo, messages.oid) : [];
      const same = actual.length === expected.size && actual.every((e) => expected.get(e.name) === e.oid);
      if (!same) {
        this.differences.push({
          kind: 'branch-differs',
          branch: b.name,
          detail: `the messages at the tip of ${b.name} differ from the DAG's nodes`,
        });
        return;
      }
      for (const e of actual) {
        await this.#host.due();
        if (!(await this.#repo.objects.has(e.oid)))
          this.differences.push({
            kind: 'missing-object',
            branch: b.name,
            actual: e.oid,
            detail: `blob ${e.oid} (${e.name}) is missing`,
          });
      }
    } catch (err) {
      this.#objectError(b.name, err);
    }
  }

  /** Branches the DAG does not derive (kept), a config git cannot read, damage below the refs. */
  async besideBranches(expectedNames: ReadonlySet<string>): Promise<void> {
    let actualBranches: string[] = [];
    try {
      actualBranches = await this.#repo.refs.branches();
    } catch (err) {
      this.differences.push({ kind: 'corrupt', detail: (err as Error).message });
    }
    for (const name of actualBranches) {
      if (!expectedNames.has(name))
        this.differences.push({
          kind: 'extra-branch',
          branch: name,
          detail: `branch ${name} is not derived from the DAG (kept: refs are never deleted)`,
        });
    }
    const { store } = this.#ctx;
    const { gitdir } = this.#repo;
    if (!configReadable(await store.readText(joinPath(gitdir, 'config'))))
      this.differences.push({ kind: 'corrupt', detail: `${gitdir}/config is missing or unreadable by git` });
    await this.#host.due();
    this.differences.push(...damageDifferences(await inspectRepository(store, gitdir)));
  }

  /** The branch HEAD names (null, with the difference added, when HEAD is damaged). */
  async headBranch(): Promise<string | null> {
    try {
      return await this.#repo.refs.headBranch();
    } catch (err) {
      this.differences.push({ kind: 'corrupt', detail: (err as Error).message });
      return null;
    }
  }

  /** `head-differs` when HEAD names another branch than the DAG head's. */
  headIs(derivation: Derivation<Known>, head: string | null, expectedNames: ReadonlySet<string>): void {
    if (derivation.head !== null && head !== derivation.head && expectedNames.has(derivation.head)) {
      this.differences.push({
        kind: 'head-differs',
        expected: derivation.head,
        actual: head,
        detail: `HEAD names ${head ?? 'nothing'}, the DAG head is on ${derivation.head}`,
      });
    }
  }

  /** The index and the files of the working tree against the head branch's files. */
  async worktree(derivation: Derivation<Known>, head: string): Promise<void> {
    const expected = new Map<string, string>();
    for (const [path, n] of await this.#host.run(headFileSteps(derivation, this.#layout))) expected.set(path, n.blob);
    await this.#host.due();
    let entries: IndexEntry[] = [];
    try {
      entries = (await readIndex(this.#ctx.store, this.#repo.gitdir))?.entries ?? [];
    } catch {
      entries = [];
    }
    const indexed = entries.filter((e) => e.path !== 'meta.json');
    const same =
      indexed.length === expected.size &&
      indexed.every((e) => expected.get(e.path) === e.oid) &&
      (expected.size === 0 || entries.some((e) => e.path === 'meta.json'));
    if (!same)
      this.differences.push({
        kind: 'worktree-differs',
        branch: head,
        detail: `the index of ${this.#repo.dir} does not hold the files of ${head}`,
      });
    // The files themselves: `git status` clean is the promise, not only the index.
    await this.#host.due();
    try {
      const tip = await this.#repo.refs.resolve(`refs/heads/${head}`);
      const meta =
        tip === null ? undefined : (await readCommitTree(this.#repo.objects, tip)).find((e) => e.name === 'meta.json');
      const target = new Map(expected);
      if (meta) target.set('meta.json', meta.oid);
      const damage = await worktreeDamage(this.#ctx.store, this.#repo.dir, target, this.#host);
      this.differences.push(...worktreeDifferences(damage, head, this.#repo.dir));
    } catch {
      // a damaged tip is reported by the branch's check already
    }
  }

  /** `ids-differ` for each of `names` whose ref is not the commit a fresh backfill writes (`expected`). */
  async ids(expected: ReadonlyMap<string, string>, names: ReadonlySet<string>): Promise<void> {
    for (const name of [...names].sort()) {
      const want = expected.get(name);
      const actual = await this.#repo.refs.resolve(`refs/heads/${name}`).catch(() => null);
      if (want !== undefined && actual !== want) {
        this.differences.push({
          kind: 'ids-differ',
          branch: name,
          expected: want,
          actual,
          detail: `branch ${name} holds the DAG's turns under other commit ids than a fresh backfill writes (${want.slice(0, 10)})`,
        });
      }
    }
  }
}
