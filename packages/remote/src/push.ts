import { META_REF, type RedactionOptions } from '@entity-git/core';
import { repoExists } from '@entity-git/core/repository';
import { EntityGitError, loadIsoGit } from '@entity-git/git';
import { advertisedRefs } from './advertise.js';
import { buildHeadRecord, HEAD_RECORD_REF, readHeadRecord, rootCommit } from './head-record.js';
import { ensureRemoteConfig } from './remote-config.js';
import { localBranches, openTarget, type RemoteTarget, type SessionTarget, withRemoteLock } from './target.js';
import { transportFs } from './transport-fs.js';
import { transportError } from './transport-error.js';
import { refuseSecrets } from './push-scan.js';

export interface PushOptions extends RemoteTarget {
  sessionId: string;
  /**
   * Overwrite remote branches that have diverged from the local ones (this machine's version
   * wins; the host may still refuse). Default false: a diverged branch is `REMOTE_REJECTED`.
   */
  force?: boolean;
  /**
   * Send even when the commits to send hold secrets. Default false: what would be sent (the
   * commits the host lacks, with their messages and files) is scanned first, and any secret found
   * is `SECRETS_FOUND` with the findings in `data.findings`; nothing is sent.
   */
  allowSecrets?: boolean;
  /** The detector set of that scan, as the mirror's `redaction` option. Default `{ preset: 'recommend' }`. */
  redaction?: RedactionOptions;
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

/** A push under way: the target, the snapshot of the local refs it sends, what the host has, what it did. */
interface PushRun {
  readonly target: SessionTarget;
  readonly force: boolean;
  /** Every local branch and its tip, read once: what is sent is this snapshot. */
  readonly branches: Map<string, string>;
  /** The branch HEAD names (null: detached or unborn). */
  readonly head: string | null;
  readonly advertised: Map<string, string>;
  readonly result: PushResult;
}

/**
 * Push a session's repository: every branch (`refs/heads/*`), then the HEAD record
 * (`refs/entity-git/HEAD`, see {@link buildHeadRecord}) and the meta ref (`refs/entity-git/meta`). Only refs whose value on the host differs
 * are sent, each as a fast-forward unless `force`. Local refs are read, never written; the only
 * local writes are the HEAD record object and isomorphic-git's remote-tracking refs
 * (`refs/remotes/<name>/*`), so a push never waits for, or holds up, the mirror's sync.
 *
 * Throws `SECRETS_FOUND` (nothing sent) when the commits to send hold secrets, unless `allowSecrets`;
 * `REMOTE_AUTH`, `REMOTE_NOT_FOUND`, `REMOTE_ERROR` (`data.retryable`), and — after every
 * other ref was pushed — `REMOTE_REJECTED` with the full {@link PushResult} in `data.result`.
 * `SESSION_NOT_FOUND` when the session has no local repository.
 */
export async function pushSession(options: PushOptions): Promise<PushResult> {
  const target = openTarget(options, options.sessionId);
  const { ctx, repo, remote, url, sessionId, conn } = target;
  if (!(await repoExists(ctx, repo))) {
    throw new EntityGitError(
      'SESSION_NOT_FOUND',
      `session ${JSON.stringify(sessionId)} has no repository at ${repo.dir} to push`,
      { sessionId },
    );
  }
  return withRemoteLock(target, async () => {
    await ensureRemoteConfig(ctx.store, repo, remote, url);
    const branches = await localBranches(repo);
    const head = await repo.refs.headBranch().catch(() => null);
    const result: PushResult = { sessionId, url: conn.safeUrl, pushed: [], upToDate: [], rejected: [], head: null };
    // A session with no complete turn has nothing to send; the host is not asked.
    if (branches.size === 0) return result;
    const advertised = await advertisedRefs(target, 'push');
    if (options.allowSecrets !== true)
      await refuseSecrets(target, branches, [...advertised.values()], options.redaction);
    const run: PushRun = { target, force: options.force === true, branches, head, advertised, result };
    for (const [name, oid] of branches) await send(run, oid, `refs/heads/${name}`, run.force);
    await sendHeadRecord(run);
    // The meta ref is a pure function of the session row, this library's own ref: the local value
    // wins, as for the HEAD record (the DAG is the source of truth; the next sync writes it).
    const meta = await repo.refs.resolve(META_REF).catch(() => null);
    if (meta !== null) await send(run, meta, META_REF, true);
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

/**
 * Send the local commit `local` as the host's `ref` unless the host has it already; a refusal
 * (a diverged branch) is recorded in the result, any other failure thrown.
 */
async function send(run: PushRun, local: string, ref: string, force: boolean): Promise<void> {
  const { target, result } = run;
  const before = run.advertised.get(ref) ?? null;
  if (before === local) {
    result.upToDate.push(ref);
    return;
  }
  try {
    // By object id, not by ref name: what is sent is the snapshot read before, even if a sync
    // moves the branch meanwhile (the next push sends that).
    const { push } = await loadIsoGit();
    await push({
      ...target.conn.args(),
      fs: transportFs(target.ctx.store, target.repo),
      gitdir: target.repo.gitdir,
      ref: local,
      remoteRef: ref,
      remote: target.remote.name,
      force,
    });
    result.pushed.push({ ref, from: before, to: local });
  } catch (err) {
    const e = transportError(err, 'push', target.url, target.sessionId);
    if (e.code !== 'REMOTE_REJECTED') throw e;
    result.rejected.push({ ref, local, remote: before ?? '', reason: String(e.data.reason ?? 'rejected by the host') });
  }
}

/**
 * The HEAD record of the branch HEAD names, sent when the host's names another (this library's
 * own ref: the local value always wins); the result's `head` is the branch the host's record
 * names afterwards.
 */
async function sendHeadRecord(run: PushRun): Promise<void> {
  const { target, head, branches, advertised, result } = run;
  const { objects } = target.repo;
  if (head !== null && branches.has(head)) {
    const current = advertised.get(HEAD_RECORD_REF);
    if (current !== undefined && (await readHeadRecord(objects, current)) === head) {
      result.upToDate.push(HEAD_RECORD_REF);
    } else {
      const record = await objects.write('tag', buildHeadRecord(head, await rootCommit(objects, branches.get(head)!)));
      await send(run, record, HEAD_RECORD_REF, true);
    }
    result.head = head;
  } else if (advertised.has(HEAD_RECORD_REF)) {
    result.head = await readHeadRecord(objects, advertised.get(HEAD_RECORD_REF)!);
  }
}
