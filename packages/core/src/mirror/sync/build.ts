import { buildCommit, buildTree, extendTree, type TreeEntry } from '@entity-git/git';
import type { BranchPlan, Derivation } from '../../model/derive.js';
import { commitMessage, turnTime } from '../../model/commit-message.js';
import type { MirrorContext } from '../context.js';
import { HostYield, yieldToHost } from '../host-yield.js';
import { shardOf } from '../layout.js';
import type { Layout } from '../mirror.js';
import type { Known } from '../repo/state.js';
import { newBuild, trimBuild, type BranchBuild } from '../branch-build.js';
import type { Planned, TurnWork } from './plan.js';
import type { Prewritten } from './prewrite.js';
import { seedFromRepository } from './seed.js';
import { looseSink, packSink, turnSink, type ObjectSink } from './sinks.js';

/** The third phase's value: the commits of every turn to write, made into the sink. */
export interface Built extends Planned {
  derivation: Derivation<Known>;
  /** Each branch's build, carried to its last complete turn. */
  builds: Map<string, BranchBuild>;
  /** Commits this sync made (not found in the memo). */
  commitsWritten: number;
  /** Set when only the head branch gained whole turns on top of its tip: these nodes. */
  appended: Known[] | null;
  /** Commits this sync made (not found in the memo). */
  created: Set<string>;
  /** A backfill's message files, written beside its objects. */
  prewritten: Promise<Prewritten> | null;
  /** Where the objects went, to be finished by the write phase; null when nothing was built. */
  sink: ObjectSink | null;
  /** The branches, from turn `from` on, whose nodes the sink's objects hold once finished. */
  stored: { branches: readonly BranchPlan<Known>[]; from: number } | null;
  /** The object store's counts before the build: objects and bytes written. */
  before: { objects: number; bytes: number };
}

/** Build the commits of the planned turns (their blobs, trees and commits go into a sink). */
export async function build(ctx: MirrorContext, p: Planned, beside: Promise<unknown>[]): Promise<Built> {
  const { sessionId, repo, layout, state, delta, metaBytes, fresh, work } = p;
  const before = { objects: repo.objects.written, bytes: repo.objects.writtenBytes };
  // Commits this sync made.
  const created = new Set<string>();
  const none = { created, prewritten: null, sink: null, stored: null, before };
  if (work.kind === 'same')
    return { ...p, ...none, derivation: work.derivation, builds: work.builds, commitsWritten: 0, appended: [] };
  if (work.kind === 'extend') return { ...p, ...none, ...(await buildExtension(ctx, p, work, created)) };
  const { derivation } = work;
  if (work.seed)
    await seedFromRepository(ctx, {
      sessionId,
      repo,
      layout,
      derivation,
      memo: state.memo,
      added: delta.memo,
      metaOid: repo.objects.hash('blob', metaBytes),
    });
  const builds = new Map(derivation.branches.map((b) => [b.name, newBuild()]));
  const host = new HostYield(ctx.yieldEveryMs);
  const sink =
    work.sink === 'pack'
      ? packSink(ctx.store, repo, ctx.onDemand, () => host.due())
      : work.sink === 'turn'
        ? await turnSink(ctx, repo)
        : looseSink(repo.objects);
  let prewritten: Promise<Prewritten> | null = null;
  if (work.sink === 'pack' && ctx.store.workTree) {
    // On demand: only a storage with a working tree (Node) writes files beside the pack.
    prewritten = ctx.onDemand().then((later) => later.prewrite(ctx, { repo, layout, derivation, fresh }));
    // Its failure is met where the checkout awaits it (or the sync failed before that).
    prewritten.catch(() => undefined);
    beside.push(prewritten);
  }
  const commitsWritten = await commitBranches(ctx, {
    sessionId,
    layout,
    work: derivation.branches.map((b) => [b, builds.get(b.name)!]),
    memo: state.memo,
    metaBytes,
    fresh,
    added: delta.memo,
    sink,
    created,
  });
  const stored = { branches: derivation.branches, from: 0 };
  return { ...p, ...none, derivation, builds, commitsWritten, appended: null, prewritten, sink, stored };
}

/** The last sync's build of one branch carried on along the extension: its new turns' commits, into a turn sink. */
async function buildExtension(
  ctx: MirrorContext,
  p: Planned,
  work: Extract<TurnWork, { kind: 'extend' }>,
  created: Set<string>,
): Promise<Pick<Built, 'derivation' | 'builds' | 'commitsWritten' | 'appended' | 'sink' | 'stored'>> {
  const { sessionId, repo, layout, state, delta, metaBytes, fresh } = p;
  const { extension, derivation, builds } = work;
  const build = builds.get(extension.before.name) ?? newBuild();
  builds.set(extension.before.name, build);
  const kept = build.commits.length;
  if (extension.keep < kept) trimBuild(build, layout, extension.before, extension.keep);
  const sink = await turnSink(ctx, repo);
  const commitsWritten = await commitBranches(ctx, {
    sessionId,
    layout,
    work: [[extension.after, build]],
    memo: state.memo,
    metaBytes,
    fresh,
    added: delta.memo,
    sink,
    created,
  });
  let appended: Known[] | null = null;
  // The index gains the new nodes of whole turns, unless the branch gave up a turn it had.
  if (build.commits.length >= kept) {
    if (extension.after.name !== derivation.head) appended = [];
    else {
      const fresh = new Set(p.added!.map((n) => n.id));
      const extended =
        extension.keep < kept ? extension.after.turns[extension.keep]!.nodes.filter((n) => fresh.has(n.id)) : [];
      appended = [...extended, ...extension.after.turns.slice(kept, extension.after.complete).flatMap((t) => t.nodes)];
    }
  }
  const stored = { branches: [extension.after], from: Math.min(kept, extension.keep) };
  return { derivation, builds, commitsWritten, appended, sink, stored };
}

/** What {@link commitBranches} commits, and where. */
export interface CommitWork {
  sessionId: string;
  layout: Layout;
  /** Each branch with the build to carry to its last complete turn. */
  work: [BranchPlan<Known>, BranchBuild][];
  /** Turn key (parent + the turn's blobs) → commit id: a turn found there is not built again. */
  memo: Map<string, string>;
  /** meta.json's content. */
  metaBytes: Uint8Array;
  /** Framed blobs of nodes no commit holds yet, by blob id: written with the first tree naming them. */
  fresh: Map<string, Uint8Array>;
  /** The memo keys added (for the state's log). */
  added: string[];
  /** Where the blobs, trees and commits go. */
  sink: ObjectSink;
  /** Commits made are added here, when given. */
  created?: Set<string>;
}

/**
 * Carry each build to the commit of every complete turn of its branch, reusing the memo (turn
 * key → commit). Blobs are written as the first tree that holds them is, so a pending turn
 * leaves nothing dangling. Returns how many commits were made.
 */
export async function commitBranches(ctx: MirrorContext, o: CommitWork): Promise<number> {
  const { sessionId, layout, work, memo, metaBytes, fresh, added, sink, created } = o;
  let metaBlob: string | null = null;
  const blobsDone = new Set<string>();
  let commits = 0;
  const host = new HostYield(ctx.yieldEveryMs);
  for (const [b, build] of work) {
    let parent: string | null = build.commits.at(-1) ?? null;
    for (let k = build.commits.length; k < b.complete; k++) {
      if (host.owed()) await yieldToHost();
      const turn = b.turns[k]!;
      for (const n of turn.nodes) {
        const e: TreeEntry = { mode: '100644', name: n.name, oid: n.blob };
        build.entries.push(e);
        if (layout === 'sharded') {
          const shard = shardOf(n.seq);
          const files = build.shards.get(shard);
          if (files) files.push(e);
          else build.shards.set(shard, [e]);
        }
      }
      const key = `${parent ?? ''}|${turn.nodes.map((n) => n.blob).join(',')}`;
      let oid = memo.get(key);
      if (oid === undefined) {
        for (let i = build.checked; i < build.entries.length; i++) {
          const blob = build.entries[i]!.oid;
          const raw = fresh.get(blob);
          if (raw && !blobsDone.has(blob)) {
            await sink.writeRaw(raw, blob);
            blobsDone.add(blob);
          }
        }
        build.checked = build.entries.length;
        metaBlob ??= await sink.write('blob', metaBytes);
        const messages = await messagesTree(layout, sink, build);
        const root = await sink.write(
          'tree',
          // In git's order already (`messages/` sorts before `meta.json`): nothing to sort.
          buildTree([
            { mode: '40000', name: 'messages', oid: messages },
            { mode: '100644', name: 'meta.json', oid: metaBlob },
          ]),
          '',
        );
        const time = turnTime(turn.nodes);
        oid = await sink.write(
          'commit',
          buildCommit({
            tree: root,
            parents: parent === null ? [] : [parent],
            author: { ...ctx.identity, time },
            committer: { ...ctx.identity, time },
            message: commitMessage(sessionId, turn.index, turn.nodes),
          }),
        );
        memo.set(key, oid);
        added.push(key);
        created?.add(oid);
        commits++;
      }
      build.commits.push(oid);
      parent = oid;
    }
  }
  return commits;
}

/**
 * The `messages/` tree of a build at its current entries. Sharded: along one branch a shard only
 * gains entries, so a shard whose entry count is the one its tree was last built with still has
 * that tree.
 */
async function messagesTree(layout: Layout, sink: ObjectSink, build: BranchBuild): Promise<string> {
  if (layout === 'flat') {
    // The tree one turn earlier plus this turn's entries, when they sort after it (they do:
    // names start with the seq) — not a rebuild of every entry.
    const extended = extendTree(build.flat?.bytes ?? new Uint8Array(0), build.entries, build.flat?.count ?? 0);
    build.flat = extended && { bytes: extended, count: build.entries.length };
    return sink.write('tree', extended ?? buildTree(build.entries), 'messages');
  }
  const dirs: TreeEntry[] = [];
  for (const [shard, files] of build.shards) {
    let tree = build.built.get(shard);
    if (tree === undefined || tree.count !== files.length) {
      tree = { count: files.length, oid: await sink.write('tree', buildTree(files), `messages/${shard}`) };
      build.built.set(shard, tree);
    }
    dirs.push({ mode: '40000', name: shard, oid: tree.oid });
  }
  return sink.write('tree', buildTree(dirs), 'messages');
}
