import { EntityGitError, loadIsoGit, type Storage } from '@entity-git/git';
import { META_REF } from '../model/session-meta.js';
import { buildHeadRecord, readHeadRecord, rootCommit } from './head-record.js';
import { defineRemote, type Remote, type RemoteOptions } from './remote.js';
import {
  Connection,
  ensureRemoteConfig,
  HEAD_RECORD_REF,
  remoteError,
  repoExists,
  repoOf,
  storeFor,
  transportFs,
  type Repo,
} from './transport.js';
import { repoFile } from '../mirror/repo-files.js';

/** Where a session's repository is, locally and on the host. */
export interface RemoteTarget {
  /** The git host (see {@link defineRemote}). */
  remote: Remote | RemoteOptions;
  /** The storage adapter the mirror uses (`nodeStorage()`, the browser's, …). */
  storage: Storage;
  /** The mirror's root: session repositories are `<root>/<idSegment(session)>/`. */
  root: string;
  /** How long to wait for a ref or index lock held by someone else. Default 5000 ms. */
  lockTimeoutMs?: number;
}

export interface PushOptions extends RemoteTarget {
  sessionId: string;
  /**
   * Overwrite remote branches that have diverged from the local ones (this machine's version
   * wins; the host may still refuse). Default false: a diverged branch is `REMOTE_REJECTED`.
   */
  force?: boolean;
}

export interface RefUpdate {
  ref: string;
  /** The host's value before (null: the ref was created). */
  from: string | null;
  to: string;
}

export interface PushResult {
  sessionId: string;
  /** The repository's URL, without credentials. */
  url: string;
  /** Refs the host created or moved (branches, then the HEAD record and the meta ref). */
  pushed: RefUpdate[];
  /** Refs the host already had at the local value. */
  upToDate: string[];
  /** Branches the host has at a commit that is not an ancestor of the local one. */
  rejected: Array<{ ref: string; local: string; remote: string; reason: string }>;
  /** The branch the remote's HEAD record names after the push (null: no branch yet). */
  head: string | null;
}

const branchOrder = (a: string, b: string) => (a === 'main' ? -1 : b === 'main' ? 1 : a < b ? -1 : a > b ? 1 : 0);

/** Every branch of the local repository with its tip, read without a lock (refs move by rename). */
export async function localBranches(repo: Repo): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const name of (await repo.refs.branches()).sort(branchOrder)) {
    const oid = await repo.refs.resolve(`refs/heads/${name}`);
    if (oid !== null) out.set(name, oid);
  }
  return out;
}

/**
 * Push a session's repository: every branch (`refs/heads/*`), then the HEAD record
 * (`refs/entity-git/HEAD`, see {@link buildHeadRecord}) and the meta ref (`refs/entity-git/meta`). Only refs whose value on the host differs
 * are sent, each as a fast-forward unless `force`. Local refs are read, never written; the only
 * local writes are the HEAD record object and isomorphic-git's remote-tracking refs
 * (`refs/remotes/<name>/*`), so a push never waits for, or holds up, the mirror's sync.
 *
 * Throws `REMOTE_AUTH`, `REMOTE_NOT_FOUND`, `REMOTE_ERROR` (`data.retryable`), and — after every
 * other ref was pushed — `REMOTE_REJECTED` with the full {@link PushResult} in `data.result`.
 * `SESSION_NOT_FOUND` when the session has no local repository.
 */
export async function pushSession(options: PushOptions): Promise<PushResult> {
  const remote = defineRemote(options.remote);
  const store = storeFor(options.storage);
  const { sessionId } = options;
  const repo = repoOf(store, options.root, sessionId, options.lockTimeoutMs);
  const url = remote.urlFor(sessionId);
  if (!(await repoExists(store, repo))) {
    throw new EntityGitError(
      'SESSION_NOT_FOUND',
      `session ${JSON.stringify(sessionId)} has no repository at ${repo.dir} to push`,
      { sessionId },
    );
  }
  return store.lock(repoFile(repo.gitdir, 'remote.lock'), async () => {
    await ensureRemoteConfig(store, repo, remote, url);
    const branches = await localBranches(repo);
    const head = await repo.refs.headBranch().catch(() => null);

    const conn = new Connection(remote, url);
    const result: PushResult = { sessionId, url: conn.safeUrl, pushed: [], upToDate: [], rejected: [], head: null };
    // A session with no complete turn has nothing to send; the host is not asked.
    if (branches.size === 0) return result;
    const fs = transportFs(store, repo);
    let advertised: Map<string, string>;
    try {
      const { getRemoteInfo2 } = await loadIsoGit();
      const info = await getRemoteInfo2({ ...conn.args(), forPush: true, protocolVersion: 1 });
      advertised = new Map((info.refs ?? []).map((r) => [r.ref, r.oid]));
    } catch (err) {
      throw remoteError(err, 'push', url, sessionId);
    }
    const send = async (local: string, ref: string, force: boolean): Promise<void> => {
      const before = advertised.get(ref) ?? null;
      if (before === local) {
        result.upToDate.push(ref);
        return;
      }
      try {
        // By object id, not by ref name: what is sent is the snapshot read above, even if a
        // sync moves the branch meanwhile (the next push sends that).
        const { push: isoPush } = await loadIsoGit();
        await isoPush({
          ...conn.args(),
          fs,
          gitdir: repo.gitdir,
          ref: local,
          remoteRef: ref,
          remote: remote.name,
          force,
        });
        result.pushed.push({ ref, from: before, to: local });
      } catch (err) {
        const e = remoteError(err, 'push', url, sessionId);
        if (e.code !== 'REMOTE_REJECTED') throw e;
        result.rejected.push({
          ref,
          local,
          remote: before ?? '',
          reason: String(e.data.reason ?? 'rejected by the host'),
        });
      }
    };
    for (const [name, oid] of branches) await send(oid, `refs/heads/${name}`, options.force === true);

    if (head !== null && branches.has(head)) {
      const current = advertised.get(HEAD_RECORD_REF);
      if (current !== undefined && (await readHeadRecord(repo.objects, current)) === head) {
        result.upToDate.push(HEAD_RECORD_REF);
      } else {
        const record = await repo.objects.write(
          'tag',
          buildHeadRecord(head, await rootCommit(repo.objects, branches.get(head)!)),
        );
        // The record is this library's own ref: it always takes the local value.
        await send(record, HEAD_RECORD_REF, true);
      }
      result.head = head;
    } else if (advertised.has(HEAD_RECORD_REF)) {
      result.head = await readHeadRecord(repo.objects, advertised.get(HEAD_RECORD_REF)!);
    }
    // The meta ref is a pure function of the session row, this library's own ref: the local value
    // wins, as for the HEAD record (the DAG is the source of truth; the next sync writes it).
    const meta = await repo.refs.resolve(META_REF).catch(() => null);
    if (meta !== null) await send(meta, META_REF, true);
    if (result.rejected.length > 0) {
      throw new EntityGitError(
        'REMOTE_REJECTED',
        `push of session ${JSON.stringify(sessionId)} (${conn.safeUrl}): the host has diverged on ${result.rejected.map((r) => r.ref).join(', ')} — fetch with force to take the host's version, or push with force to overwrite it`,
        { sessionId, url: conn.safeUrl, result, retryable: false },
      );
    }
    return result;
  });
}
