import { EntityGitError } from '@entity-git/git';
import { observeMirror } from './observed-mirror.js';
import { createContext, type MirrorContext } from './context.js';
import { loadOnDemand } from './load-on-demand.js';
import type {
  BranchInfo,
  CommitInfo,
  LogPage,
  LogPageRequest,
  Mirror,
  MirrorOptions,
  SyncOptions,
  SyncResult,
  TurnView,
  VerifyOptions,
  VerifyReport,
} from './mirror.js';
import { repoPath } from './repo/repo.js';
import { sessionIdOf } from './session-id.js';
import { branches, log, logPage, read } from './replay.js';
import { syncSession } from './sync/pipeline.js';

/**
 * The mirror over any storage adapter (docs/design.md, 'What it is'): Node and the browser run the same code and
 * produce the same commit ids. A sync runs the phases of `sync/` (pipeline.ts); replay.ts reads
 * commits back, verify/verify.ts compares a repository with its DAG; what the mirror keeps between calls
 * is in repo/cache.ts.
 */
export function createMirror(options: MirrorOptions): Mirror {
  return observeMirror(new SessionMirror(options), options.logger);
}

/**
 * The {@link Mirror} seam over one {@link MirrorContext}: options, storage and caches. Each method
 * is where a session id enters the mirror: it is checked there once, and trusted inside.
 */
class SessionMirror implements Mirror {
  private readonly ctx: MirrorContext;

  constructor(o: MirrorOptions) {
    this.ctx = createContext(o, loadOnDemand);
  }

  repoPath(sessionId: string): string {
    return repoPath(this.ctx, sessionIdOf(sessionId));
  }

  async sync(sessionId: string, options: SyncOptions = {}): Promise<SyncResult> {
    const { reread } = options;
    if (reread !== undefined && !(Number.isSafeInteger(reread) && reread >= 1))
      throw new EntityGitError('INVALID_ARGUMENT', `reread must be a seq (an integer ≥ 1), got ${String(reread)}`, {
        reread,
      });
    return syncSession(this.ctx, sessionIdOf(sessionId), options);
  }

  log(sessionId: string, options: { branch?: string; page: LogPageRequest }): Promise<LogPage>;
  log(sessionId: string, options?: { branch?: string }): Promise<CommitInfo[]>;
  async log(
    sessionId: string,
    options: { branch?: string; page?: LogPageRequest } = {},
  ): Promise<CommitInfo[] | LogPage> {
    const { page, ...rest } = options;
    const id = sessionIdOf(sessionId);
    return page === undefined ? log(this.ctx, id, rest) : logPage(this.ctx, id, { ...rest, page });
  }

  async branches(sessionId: string): Promise<BranchInfo[]> {
    return branches(this.ctx, sessionIdOf(sessionId));
  }

  async read(sessionId: string, commit: string, options: { branch?: string } = {}): Promise<TurnView> {
    return read(this.ctx, sessionIdOf(sessionId), commit, options);
  }

  async verify(sessionId: string, options: VerifyOptions = {}): Promise<VerifyReport> {
    const id = sessionIdOf(sessionId);
    return (await this.ctx.onDemand()).verify(this.ctx, id, options);
  }
}
