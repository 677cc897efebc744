import { createHash } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { ProjectGit } from '@entity-git/core';
import {
  createProjectGit,
  type PendingEdit,
  type ProjectGitOptions,
  type ProjectJournal,
  type ProjectLock,
} from '../index.js';
import { ledgerKey, type AgentCommitEntry, type AgentCommitLedger } from '../agent-ledger.js';
import type { LockOptions } from '@entity-git/git';
import { defaultProjectGitEngine, type NativeGitEngineOptions } from './native-git-engine.js';
import { nodeStorage } from '@entity-git/node-fs';
import { defaultStateDir, ensurePrivateDir } from './private-dir.js';

export interface WorkdirLockOptions extends Partial<LockOptions> {
  /**
   * Where lock and journal files live. Default {@link defaultStateDir} (`$XDG_RUNTIME_DIR` or a
   * cache directory in the home): outside the user's project (which may not even be a repository
   * yet) and its `.git`, and private — made 0700, and refused (`UNSAFE_DIRECTORY`) when it is
   * another user's or others may write in it.
   */
  dir?: string;
  /** How long to wait for another process's commit into the same project. Default `LOCK_DEFAULTS.sync` (60 s). */
  timeoutMs?: number;
  /** A lock not refreshed for this long belongs to a dead process and is taken over. Default `LOCK_DEFAULTS.sync` (30 s). */
  staleMs?: number;
}

/** One name per directory however it is spelled: the real path when it exists, else the resolved one. */
async function keyOf(path: string): Promise<string> {
  const real = await fsp.realpath(path).catch(() => resolve(path));
  return createHash('sha256').update(real).digest('hex').slice(0, 32);
}

/**
 * The cross-process lock per project for {@link createProjectGit}: a lock file named by a hash of
 * the directory's real path, held with `open(…, 'wx')`, refreshed while held, taken over only from
 * a dead holder (the node-fs storage lock).
 */
export function workdirLock(options: WorkdirLockOptions = {}): ProjectLock {
  const dir = options.dir ?? defaultStateDir();
  const storage = nodeStorage({ syncLock: { timeoutMs: options.timeoutMs, staleMs: options.staleMs } });
  return async (key, fn) => {
    await ensurePrivateDir(dir);
    return storage.withLock!(join(dir, `${await keyOf(key)}.lock`), fn);
  };
}

/**
 * Pending agent edits in a JSON file per repository beside its lock file, shared by every process
 * on the machine. Only called under {@link workdirLock}; written through temp+rename.
 */
export function workdirJournal(options: Pick<WorkdirLockOptions, 'dir'> = {}): ProjectJournal {
  const dir = options.dir ?? defaultStateDir();
  const file = async (root: string) => {
    await ensurePrivateDir(dir);
    return join(dir, `${await keyOf(root)}.pending.json`);
  };
  return {
    async read(root) {
      const text = await fsp.readFile(await file(root), 'utf8').catch(() => null);
      if (text === null) return [];
      try {
        const parsed = JSON.parse(text) as { root?: string; edits?: PendingEdit[] };
        return Array.isArray(parsed.edits) ? parsed.edits : [];
      } catch {
        // A torn file (a crash mid-write cannot make one: it is renamed into place) is treated as empty.
        return [];
      }
    },
    async write(root, edits) {
      const path = await file(root);
      if (edits.length === 0) {
        await fsp.unlink(path).catch(() => undefined);
        return;
      }
      const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
      // 0600 whatever the umask: it names the project, the session and the user's words.
      await fsp.writeFile(tmp, JSON.stringify({ root, edits }, null, 2), { mode: 0o600, flag: 'wx' });
      await fsp.rename(tmp, path);
    },
  };
}

/**
 * entity-git's record of its agent commits, one JSON line per commit in a file per repository
 * beside its lock (0600, in the private state directory): what the project's own git cannot write,
 * so what an undo takes as proof. Appended before the branch moves.
 */
export function workdirLedger(options: Pick<WorkdirLockOptions, 'dir'> = {}): AgentCommitLedger {
  const dir = options.dir ?? defaultStateDir();
  const file = async (root: string) => {
    await ensurePrivateDir(dir);
    return join(dir, `${await keyOf(root)}.agent-commits.jsonl`);
  };
  return {
    async add(root, entry) {
      const line = `${JSON.stringify({ sessionId: entry.sessionId, turn: entry.turn, commit: entry.commit })}\n`;
      await fsp.appendFile(await file(root), line, { mode: 0o600 });
    },
    async commits(root, sessionId) {
      const text = await fsp.readFile(await file(root), 'utf8').catch(() => '');
      const out = new Set<string>();
      for (const line of text.split('\n')) {
        try {
          const e = JSON.parse(line) as Partial<AgentCommitEntry>;
          if (e.sessionId === sessionId && typeof e.turn === 'number' && typeof e.commit === 'string')
            out.add(ledgerKey(e.turn, e.commit));
        } catch {
          // an empty last line, or one a crash cut short: it names nothing
        }
      }
      return out;
    },
  };
}

export interface NodeProjectGitOptions
  extends Omit<ProjectGitOptions, 'engine' | 'lock' | 'journal' | 'ledger'>,
    WorkdirLockOptions {
  /** Default: {@link defaultProjectGitEngine} (native git when found). */
  engine?: ProjectGitOptions['engine'];
  /** Passed to the native engine when it is the default one. */
  git?: NativeGitEngineOptions;
}

/** {@link createProjectGit} on Node: the default engine, {@link workdirLock}, {@link workdirJournal} and {@link workdirLedger}. */
export function createNodeProjectGit(options: NodeProjectGitOptions = {}): ProjectGit {
  const { dir, timeoutMs, staleMs, engine, git, ...rest } = options;
  const where: WorkdirLockOptions = {};
  if (dir !== undefined) where.dir = dir;
  if (timeoutMs !== undefined) where.timeoutMs = timeoutMs;
  if (staleMs !== undefined) where.staleMs = staleMs;
  return createProjectGit({
    ...rest,
    engine: engine ?? defaultProjectGitEngine(git),
    lock: workdirLock(where),
    journal: workdirJournal(where),
    ledger: workdirLedger(where),
  });
}
