import { EntityGitError, isAncestor, isEntityGitError, loadIsoGit, type Identity } from '@entity-git/git';
import { DEFAULT_IDENTITY } from '../model/identity.js';
import { checkoutHead } from './checkout.js';
import { readHeadRecord } from './head-record.js';
import { localBranches, type RemoteTarget } from './push.js';
import { defineRemote } from './remote.js';
import { META_REF } from '../model/session-meta.js';
import {
  Connection,
  ensureRemoteConfig,
  HEAD_RECORD_REF,
  initRepo,
  remoteError,
  repoExists,
  repoOf,
  storeFor,
  transportFs,
} from './transport.js';
import { repoFile, withRepoLock } from '../mirror/repo-files.js';

export interface FetchOptions extends RemoteTarget {
  sessionId: string;
  /**
   * Create the repository when the session has none (what restore does). Default false:
   * `SESSION_NOT_FOUND`.
   */
  create?: boolean;
  /**
   * Move local branches that have diverged from the host's to the host's tips (the old tips
   * stay in the reflog). Default false: they are reported in `diverged` and left alone.
   */
  force?: boolean;
  /**
   * Which branch HEAD names afterwards. `auto` (default): the host's HEAD record when this
   * repository holds nothing the host lacks (no branch ahead, diverged or only local — a
   * replica), else HEAD stays; `remote`: the host's record; `local`: HEAD stays.
   */
  head?: 'auto' | 'remote' | 'local';
  /** Who the reflog says moved the branches. Default the mirror's `entity-git <entity-git@localhost>`. */
  identity?: Identity;
}

export interface FetchResult {
  sessionId: string;
  /** The repository's URL, without credentials. */
  url: string;
  /** True when the host has no branch at all (nothing was changed, no repository created). */
  empty: boolean;
  /** True when this fetch created the local repository. */
  repositoryCreated: boolean;
  /** True when objects were downloaded (false when every advertised commit was already here). */
  downloaded: boolean;
  /** Local branches created at the host's tip. */
  created: string[];
  /** Local branches that were behind and moved forward to the host's tip. */
  fastForwarded: string[];
  /** Diverged branches moved to the host's tip (`force`). */
  forced: string[];
  /** Branches equal on both sides. */
  upToDate: string[];
  /** Local branches ahead of the host's (a push sends them). */
  ahead: string[];
  /** Branches that diverged and were left alone (see `force`). */
  diverged: string[];
  /** Local branches the host does not have. */
  localOnly: string[];
  /** The branch HEAD names afterwards (null when unborn). */
  head: string | null;
  /** The branch the host's HEAD record names (null: no record). */
  remoteHead: string | null;
  headMoved: boolean;
  /** True when the working tree and index were rewritten (storages with a working tree). */
  worktreeChanged: boolean;
}

/**
 * Bring a session's repository up to date with the host. isomorphic-git downloads the objects
 * (a pack) and writes the remote-tracking refs `refs/remotes/<name>/*` — nothing else (its file
 * system view refuses other writes). Then, holding the mirror's session lock, the local
 * branches are moved through core's RefStore (`<ref>.lock`, old-value check, reflog): a branch
 * the host has and this repository lacks is created, one that is behind is fast-forwarded, one
 * that is ahead is kept, one that diverged is kept unless `force`. HEAD follows the host's
 * HEAD record per `head`; on storages with a working tree, the tree and index are checked out.
 *
 * Afterwards the mirror's next sync sees the new tips, keeps every commit that matches the DAG
 * and writes what the DAG has beyond them — the DAG stays the source of truth.
 */
export async function fetchSession(options: FetchOptions): Promise<FetchResult> {
  const remote = defineRemote(options.remote);
  const store = storeFor(options.storage);
  const { sessionId } = options;
  const lockTimeoutMs = options.lockTimeoutMs ?? 5000;
  const repo = repoOf(store, options.root, sessionId, lockTimeoutMs);
  const url = remote.urlFor(sessionId);
  const identity = options.identity ?? DEFAULT_IDENTITY;
  if (!options.create && !(await repoExists(store, repo))) {
    throw new EntityGitError(
      'SESSION_NOT_FOUND',
      `session ${JSON.stringify(sessionId)} has no repository at ${repo.dir} to fetch into`,
      { sessionId },
    );
  }
  const conn = new Connection(remote, url);
  const result: FetchResult = {
    sessionId,
    url: conn.safeUrl,
    empty: false,
    repositoryCreated: false,
    downloaded: false,
    created: [],
    fastForwarded: [],
    forced: [],
    upToDate: [],
    ahead: [],
    diverged: [],
    localOnly: [],
    head: null,
    remoteHead: null,
    headMoved: false,
    worktreeChanged: false,
  };
  return store.lock(repoFile(repo.gitdir, 'remote.lock'), async () => {
    let advertised: Map<string, string>;
    try {
      const { getRemoteInfo2 } = await loadIsoGit();
      const info = await getRemoteInfo2({ ...conn.args(), protocolVersion: 1 });
      advertised = new Map((info.refs ?? []).map((r) => [r.ref, r.oid]));
    } catch (err) {
      throw remoteError(err, 'fetch', url, sessionId);
    }
    const heads = [...advertised.keys()]
      .filter((r) => r.startsWith('refs/heads/'))
      .sort((a, b) => (a === 'refs/heads/main' ? -1 : b === 'refs/heads/main' ? 1 : a < b ? -1 : 1));
    if (heads.length === 0) {
      result.empty = true;
      return result;
    }
    if (!(await repoExists(store, repo))) {
      await withRepoLock(store, repo.gitdir, 'sync.lock', async () => {
        if (await repoExists(store, repo)) return;
        await initRepo(store, repo);
        result.repositoryCreated = true;
      });
    }
    await ensureRemoteConfig(store, repo, remote, url);

    const wanted = [...heads, ...(advertised.has(HEAD_RECORD_REF) ? [HEAD_RECORD_REF] : [])];
    let missing = false;
    for (const ref of wanted) if (!(await repo.objects.has(advertised.get(ref)!))) missing = true;
    const tips = new Map<string, string>(wanted.map((ref) => [ref, advertised.get(ref)!]));
    if (missing) {
      const want = advertised.has(HEAD_RECORD_REF) ? HEAD_RECORD_REF : heads[0]!;
      const recorded = advertised.has(HEAD_RECORD_REF)
        ? await readHeadRecord(repo.objects, advertised.get(HEAD_RECORD_REF)!)
        : null;
      conn.assumeHead(
        recorded !== null && heads.includes(`refs/heads/${recorded}`) ? `refs/heads/${recorded}` : heads[0]!,
      );
      try {
        const { fetch: isoFetch } = await loadIsoGit();
        await isoFetch({
          ...conn.args(),
          fs: transportFs(store, repo),
          gitdir: repo.gitdir,
          remote: remote.name,
          ref: want,
          remoteRef: want,
          singleBranch: false,
          tags: false,
          prune: false,
        });
      } catch (err) {
        throw remoteError(err, 'fetch', url, sessionId);
      }
      result.downloaded = true;
      // isomorphic-git's own ref discovery wins: the pack holds what it saw.
      for (const ref of wanted) {
        const tracking = `refs/remotes/${remote.name}/${ref.startsWith('refs/heads/') ? ref.slice(11) : ref}`;
        const oid = await repo.refs.resolve(tracking).catch(() => null);
        if (oid !== null) tips.set(ref, oid);
      }
    }
    for (const [ref, oid] of tips) {
      if (!(await repo.objects.has(oid))) {
        throw new EntityGitError(
          'REMOTE_ERROR',
          `fetch of session ${JSON.stringify(sessionId)} (${conn.safeUrl}): ${ref} ${oid} did not arrive`,
          { sessionId, url: conn.safeUrl, ref, oid, retryable: true },
        );
      }
    }
    // The host's meta ref is taken where this repository has none (a restore), or with force;
    // else the local one stays: the next sync writes it from the session row either way.
    // isomorphic-git fetches one ref beside the branches, so it comes in a fetch of its own.
    const theirMeta = advertised.get(META_REF);
    const ourMeta = await repo.refs.resolve(META_REF).catch(() => undefined);
    let takeMeta = theirMeta !== undefined && ourMeta !== theirMeta && (ourMeta === null || options.force === true);
    if (takeMeta && !(await repo.objects.has(theirMeta!))) {
      try {
        const { fetch: isoFetch } = await loadIsoGit();
        await isoFetch({
          ...conn.args(),
          fs: transportFs(store, repo),
          gitdir: repo.gitdir,
          remote: remote.name,
          ref: META_REF,
          remoteRef: META_REF,
          singleBranch: true,
          tags: false,
          prune: false,
        });
      } catch (err) {
        throw remoteError(err, 'fetch', url, sessionId);
      }
      takeMeta = await repo.objects.has(theirMeta!);
    }
    const record = tips.get(HEAD_RECORD_REF);
    result.remoteHead = record === undefined ? null : await readHeadRecord(repo.objects, record);

    return withRepoLock(store, repo.gitdir, 'sync.lock', async () => {
      const local = await localBranches(repo);
      const headBefore = await repo.refs.headBranch().catch(() => null);
      const reflog = (message: string, branch: string) => ({ who: identity, message, alsoHead: branch === headBefore });
      for (const ref of heads) {
        const name = ref.slice('refs/heads/'.length);
        const theirs = tips.get(ref)!;
        const ours = local.get(name);
        if (ours === undefined) {
          await repo.refs.update(ref, theirs, {
            old: null,
            reflog: reflog(`fetch: storing head from ${conn.safeUrl}`, name),
          });
          result.created.push(name);
        } else if (ours === theirs) {
          result.upToDate.push(name);
        } else if (await isAncestor(repo.objects, ours, theirs)) {
          await repo.refs.update(ref, theirs, {
            old: ours,
            reflog: reflog(`fetch: fast-forward from ${conn.safeUrl}`, name),
          });
          result.fastForwarded.push(name);
        } else if (await isAncestor(repo.objects, theirs, ours)) {
          result.ahead.push(name);
        } else if (options.force) {
          await repo.refs.update(ref, theirs, {
            old: ours,
            reflog: reflog(`fetch: forced-update from ${conn.safeUrl}`, name),
          });
          result.forced.push(name);
        } else {
          result.diverged.push(name);
        }
      }
      if (takeMeta)
        await repo.refs.update(META_REF, theirMeta!, {
          old: ourMeta,
          reflog: { who: identity, message: `fetch: session row from ${conn.safeUrl}` },
        });
      const remoteNames = new Set(heads.map((r) => r.slice(11)));
      result.localOnly = [...local.keys()].filter((n) => !remoteNames.has(n));

      const mode = options.head ?? 'auto';
      const headTip =
        headBefore === null ? null : await repo.refs.resolve(`refs/heads/${headBefore}`).catch(() => null);
      const replica = result.ahead.length === 0 && result.diverged.length === 0 && result.localOnly.length === 0;
      const follow = mode === 'remote' || (mode === 'auto' && (replica || headTip === null));
      const exists = async (b: string | null) =>
        b !== null && (await repo.refs.resolve(`refs/heads/${b}`).catch(() => null)) !== null;
      let target: string | null = null;
      if (follow && (await exists(result.remoteHead))) target = result.remoteHead;
      else if (headTip === null) target = (await localBranches(repo)).keys().next().value ?? null;
      if (target !== null && target !== headBefore) {
        await repo.refs.setHead(
          target,
          identity,
          { branch: headBefore, oid: headTip },
          await repo.refs.resolve(`refs/heads/${target}`),
        );
        result.headMoved = true;
      }
      result.head = target ?? headBefore;
      if (store.workTree) result.worktreeChanged = await checkoutHead(store, repo, lockTimeoutMs);
      return result;
    });
  });
}

export interface RestoreOptions extends RemoteTarget {
  /** The sessions to restore: their ids, e.g. `await dag.listSessions()` (a git host cannot list them). */
  sessions: Iterable<string> | AsyncIterable<string>;
  /** Sessions restored at once. Default 4. */
  concurrency?: number;
  /**
   * A session that already has a repository: `fetch` (default) brings it up to date like
   * {@link fetchSession} (diverged branches are left alone); `skip` leaves it untouched.
   */
  existing?: 'fetch' | 'skip';
  /** Called as each session finishes. */
  onProgress?: (entry: RestoreEntry, progress: { done: number }) => void;
  identity?: Identity;
}

export interface RestoreEntry {
  sessionId: string;
  /**
   * `restored`: cloned into a new repository; `fetched`: an existing repository was brought up to
   * date; `skipped`: existing, left alone; `missing`: the host has no such repository (404);
   * `empty`: the host's repository has no branch; `failed`: see `error`.
   */
  action: 'restored' | 'fetched' | 'skipped' | 'missing' | 'empty' | 'failed';
  result?: FetchResult;
  error?: EntityGitError;
}

export interface RestoreReport {
  entries: RestoreEntry[];
  counts: Record<RestoreEntry['action'], number>;
}

/**
 * Restore session repositories from the git host alone — a fresh machine, or a lost root. Each
 * session's repository is cloned into `<root>/<idSegment(session)>/` (every branch, HEAD from the
 * host's HEAD record, the working tree checked out where the storage has one), so that the
 * mirror then finds nothing to do for the same DAG: `verify` is ok, and `sync` writes no object
 * and moves no ref (its first run only rebuilds its cache file). Never throws for one session's
 * failure: each session gets an entry.
 */
export async function restoreSessions(options: RestoreOptions): Promise<RestoreReport> {
  const remote = defineRemote(options.remote);
  const store = storeFor(options.storage);
  const entries: RestoreEntry[] = [];
  const counts: RestoreReport['counts'] = { restored: 0, fetched: 0, skipped: 0, missing: 0, empty: 0, failed: 0 };
  const concurrency = Math.max(1, options.concurrency ?? 4);
  const iterator = (
    Symbol.asyncIterator in options.sessions
      ? (options.sessions as AsyncIterable<string>)[Symbol.asyncIterator]()
      : (options.sessions as Iterable<string>)[Symbol.iterator]()
  ) as AsyncIterator<string> | Iterator<string>;
  let done = 0;
  const one = async (sessionId: string): Promise<RestoreEntry> => {
    try {
      const exists = await repoExists(store, repoOf(store, options.root, sessionId));
      if (exists && options.existing === 'skip') return { sessionId, action: 'skipped' };
      const fetchOptions: FetchOptions = {
        remote,
        storage: options.storage,
        root: options.root,
        sessionId,
        create: true,
        head: exists ? 'auto' : 'remote',
      };
      if (options.lockTimeoutMs !== undefined) fetchOptions.lockTimeoutMs = options.lockTimeoutMs;
      if (options.identity !== undefined) fetchOptions.identity = options.identity;
      const result = await fetchSession(fetchOptions);
      if (result.empty) return { sessionId, action: 'empty', result };
      return { sessionId, action: result.repositoryCreated ? 'restored' : 'fetched', result };
    } catch (err) {
      if (isEntityGitError(err, 'REMOTE_NOT_FOUND')) return { sessionId, action: 'missing', error: err };
      const error =
        err instanceof EntityGitError
          ? err
          : new EntityGitError(
              'REMOTE_ERROR',
              `restore of session ${JSON.stringify(sessionId)}: ${(err as Error)?.message ?? String(err)}`,
              { sessionId, retryable: true },
              { cause: err },
            );
      return { sessionId, action: 'failed', error };
    }
  };
  const worker = async (): Promise<void> => {
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      const entry = await one(next.value);
      entries.push(entry);
      counts[entry.action]++;
      done++;
      try {
        options.onProgress?.(entry, { done });
      } catch {
        // a progress listener cannot break the restore
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { entries, counts };
}
