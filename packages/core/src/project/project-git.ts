import { EntityGitError, isEntityGitError, assertIdentity, isOid, type Identity } from '@entity-git/git';
import { assertId, encodeId } from '../model/names.js';
import { foldLine } from '../model/text.js';
import type { PendingEdit, ProjectJournal, ProjectLock } from './project-coordination.js';
import type { Logger } from '../observe/logger.js';
import { observeAfterTurn } from '../observe/observed.js';
import {
  sameEntry,
  type ChangedPath,
  type CommitDone,
  type FileState,
  type InFlightCommit,
  type ProjectGitEngine,
  type RepoOperation,
  type RepoState,
  type WorkdirState,
} from './project-git-engine.js';
import { isAbsolute, normalizeAbsolute, toRepoPath, within } from './paths.js';

/** The warning of DESIGN.md §4, word for word. */
export const UNCOMMITTED_CHANGES_WARNING =
  "you have uncommitted changes, the agent's edits won't be auto-committed for now";

/** Why `afterTurn` did not commit the turn's edits. */
export type SkipReason =
  | 'workdir-missing'
  | 'workdir-not-a-directory'
  | 'bare-repository'
  | 'unsupported-repository'
  | 'merge-in-progress'
  | 'rebase-in-progress'
  | 'am-in-progress'
  | 'cherry-pick-in-progress'
  | 'revert-in-progress'
  | 'bisect-in-progress'
  | 'detached-head'
  | 'submodule-changes'
  | 'uncommitted-changes'
  | 'no-snapshot'
  | 'repository-locked'
  | 'nothing-to-commit';

/** A commit the agent made in the project repository. */
export interface ProjectCommit {
  readonly commit: string;
  /** The full ref that advanced (`refs/heads/main`). */
  readonly branch: string;
  readonly sessionId: string;
  readonly turn: number;
  /** Repository-relative paths it recorded (changed or removed), sorted. */
  readonly paths: readonly string[];
}

/**
 * An agent commit whose process died after its branch moved and before the index held it (see
 * docs/project-git.md, "A crash in the middle of a commit"), whose index update this call finished.
 */
export interface RecoveredCommit {
  readonly commit: string;
  /** The paths whose index entry was set to the commit's: they still held the parent commit's. */
  readonly paths: readonly string[];
  /** The paths left as they are: the user has staged something of their own there since. */
  readonly userPaths: readonly string[];
  /** One sentence for the UI when `userPaths` is not empty, else null. */
  readonly warning: string | null;
}

interface ResultBase {
  /** Present (non-empty) only when this call finished an interrupted agent commit's index update first. */
  readonly recovered?: readonly RecoveredCommit[];
  /**
   * Edits of earlier turns (of this or other sessions) that had been left pending and were
   * committed by this call, each under its own turn's message, before this turn's commit.
   */
  readonly deferred: readonly ProjectCommit[];
  /** Touched paths outside the repository (or naming no file git can hold): never committed, never blocking. */
  readonly ignoredPaths: readonly string[];
}

export interface CommittedResult extends ResultBase, ProjectCommit {
  readonly status: 'committed';
}

export interface NothingToCommitResult extends ResultBase {
  readonly status: 'skipped';
  readonly reason: 'nothing-to-commit';
  readonly warning: null;
}

export interface SkippedResult extends ResultBase {
  readonly status: 'skipped';
  readonly reason: Exclude<SkipReason, 'nothing-to-commit'>;
  /** One sentence for the UI. For `uncommitted-changes`, exactly {@link UNCOMMITTED_CHANGES_WARNING}. */
  readonly warning: string;
  /** The changes that are not the agent's and blocked the commit (repository-relative); `[]` for reasons that are not about changes. */
  readonly userPaths: readonly string[];
  /** The agent's changed paths left uncommitted. For `uncommitted-changes` they are kept pending and committed by a later turn once nothing blocks. */
  readonly agentPaths: readonly string[];
}

export type AfterTurnResult = CommittedResult | NothingToCommitResult | SkippedResult;

/**
 * What was uncommitted in a project before a turn, from {@link ProjectGit.beforeTurn}: a plain
 * JSON value the dispatcher keeps and hands back to `afterTurn`.
 */
export interface ProjectSnapshot {
  readonly version: 1;
  /** The workdir as given (normalized). */
  readonly workdir: string;
  /** The repository root then; null when the workdir was in none (or missing). */
  readonly root: string | null;
  readonly state: WorkdirState['kind'];
  /** HEAD's commit then (null: unborn or no repository). */
  readonly head: string | null;
  /** When it was taken, ms since the epoch. */
  readonly takenAt: number;
  /**
   * Paths that were the user's: uncommitted changes (repository-relative), or, for a directory in
   * no repository, every entry in it (relative to it). Everything at or below them stays the user's.
   */
  readonly dirty: readonly string[];
  /** Uncommitted paths that held an agent's pending edit, byte for byte: not the user's. */
  readonly agentDirty: readonly string[];
  /** Present (non-empty) only when taking the snapshot first finished an interrupted agent commit's index update. */
  readonly recovered?: readonly RecoveredCommit[];
}

export interface AfterTurnInput {
  /** The project's workdir, absolute. */
  workdir: string;
  sessionId: string;
  /** The turn number N (≥ 1), as in the session repository. */
  turn: number;
  /** The turn's user message (its first 60 code points, whitespace folded, make the subject). */
  userMessage: string;
  /** The model that ran the turn, named in the committer. */
  model: string;
  /** The session repository's commit of this turn, when already known (a `Session-Commit` trailer). */
  sessionCommit?: string | null;
  /** Every path the turn's tools wrote, created or removed: absolute, or relative to the workdir. */
  touchedPaths: readonly string[];
  /**
   * Optional: for paths of `touchedPaths` (keyed the same way), the bytes the tool left there, as a
   * git blob id ({@link gitBlobId}), or null for a file it removed. It closes the one case no
   * snapshot can tell: someone editing, during the turn, the very file the agent wrote. A path whose
   * file no longer holds the reported bytes is then the user's and blocks (`uncommitted-changes`),
   * and the commit checks the bytes again as it reads them, so no byte the user wrote is committed.
   */
  writtenBlobs?: Readonly<Record<string, string | null>>;
  /** From `beforeTurn`; see {@link ProjectGitOptions.withoutSnapshot} for what happens without one. */
  snapshot?: ProjectSnapshot | null;
}

export interface ProjectGit {
  /** The engine's name. */
  readonly engine: string;
  /** Record what is uncommitted before a turn. Read-only: writes nothing, anywhere. */
  beforeTurn(workdir: string): Promise<ProjectSnapshot>;
  /**
   * After a turn of a session bound to a project: commit exactly the agent's edits, or skip and say
   * why. Throws only for invalid input (`INVALID_WORKDIR`, `INVALID_ID`, `INVALID_OPTION`) and when git
   * itself fails (`PROJECT_GIT_ERROR`, `LOCK_TIMEOUT`, …); a skip is a result, not an error.
   */
  afterTurn(input: AfterTurnInput): Promise<AfterTurnResult>;
}

export interface ProjectGitOptions {
  engine: ProjectGitEngine;
  /** Where each turn's outcome is reported (`project.commit`, timed). Default: none. */
  logger?: Logger;
  /** The cross-process lock per repository. Default: an in-process mutex only (one process, or tests). */
  lock?: ProjectLock;
  /** Where pending edits live between turns. Default: process memory. */
  journal?: ProjectJournal;
  /** The committer's email; its name is always `agent (<model> via <product>)`. Default `agent@openprogram.invalid`. */
  committerEmail?: string;
  /** The product named in the committer. Default `OpenProgram`. */
  product?: string;
  /** The author of agent commits. Default: the committer. */
  author?: Identity;
  /** The branch `git init` makes when the workdir is in no repository. Default: the engine's. */
  initialBranch?: string;
  /**
   * What `afterTurn` does when given no usable snapshot and every change is a path the agent
   * touched. `'skip'` (the default): skip with `no-snapshot` — the library cannot tell whether the
   * user had edited such a path before the turn, and committing it could carry the user's bytes.
   * `'trust-touched'`: assume every touched path that changed is the agent's. Either way any
   * change on a path the agent did not touch blocks, as always.
   */
  withoutSnapshot?: 'skip' | 'trust-touched';
  /** Pending edits older than this are forgotten (their files stay as they are). Default 7 days. */
  pendingTtlMs?: number;
  /** The clock, ms since the epoch. Default `Date.now`. */
  now?: () => number;
}

const OPERATION_ORDER: readonly RepoOperation[] = ['rebase', 'am', 'merge', 'cherry-pick', 'revert', 'bisect'];
const OPERATION_NAMES: Record<RepoOperation, string> = {
  rebase: 'a rebase',
  am: 'a `git am` session',
  merge: 'a merge',
  'cherry-pick': 'a cherry-pick',
  revert: 'a revert',
  bisect: 'a bisect',
};
/** Upper bound on attempts when the branch or a file moves between the decision and the commit. */
const ATTEMPTS = 4;
const DAY = 86_400_000;

class Retry extends Error {}

/** One in-process queue per lock key, around the (cross-process) lock the adapter supplies. */
function serialized(lock: ProjectLock | undefined): ProjectLock {
  const tails = new Map<string, Promise<unknown>>();
  return async <T>(key: string, fn: () => Promise<T>): Promise<T> => {
    const previous = tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = previous.then(() => mine);
    tails.set(key, tail);
    await previous;
    try {
      return lock ? await lock(key, fn) : await fn();
    } finally {
      release();
      if (tails.get(key) === tail) tails.delete(key);
    }
  };
}

/** The default journal: pending edits in this process's memory. */
export function memoryJournal(): ProjectJournal {
  const byRoot = new Map<string, readonly PendingEdit[]>();
  return {
    read: async (root) => [...(byRoot.get(root) ?? [])],
    write: async (root, edits) => {
      if (edits.length === 0) byRoot.delete(root);
      else byRoot.set(root, [...edits]);
    },
  };
}

/** What git strips from both ends of a name or an email (ident.c `crud`): stripped here too, so every engine writes the same bytes. */
const CRUD = /^[\x00-\x20.,:;<>"\\']+|[\x00-\x20.,:;<>"\\']+$/g;
const tidy = (who: Identity): Identity => ({ name: who.name.replace(CRUD, ''), email: who.email.replace(CRUD, '') });
/** A branch name `git check-ref-format --branch` accepts (the common rules; git has the last word). */
const BRANCH =
  /^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*@\{)(?!.*\.lock(?:\/|$))(?!.*\/\.)(?!\.)[^\x00-\x20\x7f~^:?*[\\]+(?<![./])$/;

function agentName(model: string, product: string): string {
  const m = foldLine(model, 80).replace(/[<>]/g, '').trim();
  return `agent (${m === '' ? 'unknown model' : m} via ${product})`;
}

/** `[agent <session>] turn <N>: <subject>`, then the trailers that link the session repository. */
export function projectCommitMessage(
  sessionId: string,
  turn: number,
  subject: string,
  sessionCommit: string | null,
): string {
  const id = encodeId(sessionId);
  const lines = [
    subject === '' ? `[agent ${id}] turn ${turn}` : `[agent ${id}] turn ${turn}: ${subject}`,
    '',
    `Session: ${id}`,
    `Turn: ${turn}`,
  ];
  if (sessionCommit !== null) lines.push(`Session-Commit: ${sessionCommit}`);
  return `${lines.join('\n')}\n`;
}

function requireWorkdir(workdir: unknown): string {
  if (typeof workdir !== 'string' || !isAbsolute(workdir) || workdir.includes('\0')) {
    throw new EntityGitError('INVALID_WORKDIR', `workdir must be an absolute path: ${JSON.stringify(workdir)}`);
  }
  return normalizeAbsolute(workdir);
}

function validSnapshot(s: unknown, workdir: string): ProjectSnapshot {
  const o = s as Partial<ProjectSnapshot> | null;
  const strings = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string');
  if (
    typeof o !== 'object' ||
    o === null ||
    o.version !== 1 ||
    typeof o.workdir !== 'string' ||
    !(o.root === null || typeof o.root === 'string') ||
    !(o.head === null || typeof o.head === 'string') ||
    typeof o.state !== 'string' ||
    !strings(o.dirty) ||
    !strings(o.agentDirty)
  ) {
    throw new EntityGitError('INVALID_OPTION', 'snapshot is not a value beforeTurn returned', { snapshot: s });
  }
  if (normalizeAbsolute(o.workdir) !== workdir) {
    throw new EntityGitError('INVALID_OPTION', `the snapshot was taken of ${o.workdir}, not of ${workdir}`, {
      snapshot: o.workdir,
      workdir,
    });
  }
  return o as ProjectSnapshot;
}

interface Turn {
  workdir: string;
  sessionId: string;
  turn: number;
  subject: string;
  model: string;
  sessionCommit: string | null;
  touched: readonly string[];
  written: readonly (readonly [string, string | null])[];
  snapshot: ProjectSnapshot | null;
}

function validTurn(input: AfterTurnInput): Turn {
  if (typeof input !== 'object' || input === null)
    throw new EntityGitError('INVALID_OPTION', 'afterTurn needs an input object');
  const workdir = requireWorkdir(input.workdir);
  assertId(input.sessionId, 'sessionId');
  if (!Number.isSafeInteger(input.turn) || input.turn < 1)
    throw new EntityGitError('INVALID_OPTION', `turn must be a positive integer: ${String(input.turn)}`);
  if (typeof input.userMessage !== 'string') throw new EntityGitError('INVALID_OPTION', 'userMessage must be a string');
  if (typeof input.model !== 'string') throw new EntityGitError('INVALID_OPTION', 'model must be a string');
  const sessionCommit = input.sessionCommit ?? null;
  if (sessionCommit !== null && !isOid(sessionCommit))
    throw new EntityGitError('INVALID_OPTION', `sessionCommit must be a commit id: ${JSON.stringify(sessionCommit)}`);
  if (!Array.isArray(input.touchedPaths) || !input.touchedPaths.every((p) => typeof p === 'string')) {
    throw new EntityGitError('INVALID_OPTION', 'touchedPaths must be an array of strings');
  }
  const written = input.writtenBlobs ?? {};
  if (
    typeof written !== 'object' ||
    written === null ||
    Array.isArray(written) ||
    !Object.values(written).every((v) => v === null || isOid(v))
  ) {
    throw new EntityGitError(
      'INVALID_OPTION',
      'writtenBlobs must map paths to git blob ids (or null for a removed file)',
    );
  }
  return {
    workdir,
    sessionId: input.sessionId,
    turn: input.turn,
    subject: foldLine(input.userMessage, 60),
    model: input.model,
    sessionCommit,
    touched: [...input.touchedPaths],
    written: Object.entries(written),
    snapshot: input.snapshot === undefined || input.snapshot === null ? null : validSnapshot(input.snapshot, workdir),
  };
}

function lockKey(state: WorkdirState, workdir: string): string {
  if (state.kind === 'repository') return state.repo.root;
  if (state.kind === 'bare') return state.gitdir;
  return workdir;
}

const sameFile = (a: FileState, b: FileState) => a.oid === b.oid;
/** A project's journal within one locked section (see openJournal). */
interface Journal {
  readonly all: readonly PendingEdit[];
  write(next: readonly PendingEdit[]): Promise<void>;
}
const isInFlight = (e: PendingEdit): boolean => e.inFlight !== undefined && e.inFlight !== null;
/** A journal record of an in-flight commit as JSON brought it back: usable, or to be dropped. */
const validFlight = (f: InFlightCommit): boolean =>
  typeof f === 'object' &&
  f !== null &&
  isOid(f.commit) &&
  (f.parent === null || isOid(f.parent)) &&
  typeof f.branch === 'string' &&
  Array.isArray(f.paths) &&
  f.paths.every((p) => typeof p === 'string');

/**
 * The project auto-commit logic (DESIGN.md §4), the one implementation; an engine supplies git.
 * See `docs/project-git.md` for the rules and the decisions behind them.
 */
export function createProjectGit(options: ProjectGitOptions): ProjectGit {
  const engine = options.engine;
  if (!engine || typeof engine.inspect !== 'function')
    throw new EntityGitError('INVALID_OPTION', 'createProjectGit needs an engine');
  const product = foldLine(options.product ?? 'OpenProgram', 60).replace(/[<>]/g, '') || 'OpenProgram';
  const email = (options.committerEmail ?? 'agent@openprogram.invalid').replace(CRUD, '');
  assertIdentity({ name: 'agent', email });
  const author = options.author ? tidy(options.author) : null;
  if (author) assertIdentity(author);
  if (
    options.initialBranch !== undefined &&
    (typeof options.initialBranch !== 'string' || !BRANCH.test(options.initialBranch))
  ) {
    throw new EntityGitError(
      'INVALID_OPTION',
      `initialBranch is not a valid branch name: ${JSON.stringify(options.initialBranch)}`,
    );
  }
  const withoutSnapshot = options.withoutSnapshot ?? 'skip';
  if (withoutSnapshot !== 'skip' && withoutSnapshot !== 'trust-touched')
    throw new EntityGitError('INVALID_OPTION', `withoutSnapshot: ${String(withoutSnapshot)}`);
  const ttl = options.pendingTtlMs ?? 7 * DAY;
  const now = options.now ?? Date.now;
  const lock = serialized(options.lock);
  const journal = options.journal ?? memoryJournal();
  const initOptions = options.initialBranch === undefined ? {} : { initialBranch: options.initialBranch };

  /**
   * The journal of `root` for one locked section: read once, then kept as it is written (nothing
   * else writes it while the lock is held).
   */
  const openJournal = async (root: string): Promise<Journal> => {
    let all: readonly PendingEdit[] = await journal.read(root);
    return {
      get all() {
        return all;
      },
      async write(next) {
        await journal.write(root, next);
        all = next;
      },
    };
  };
  const freshPending = (j: Journal): PendingEdit[] => {
    const cutoff = now() - ttl;
    return j.all.filter((e) => !isInFlight(e) && e.at >= cutoff);
  };
  /** Replace the pending edits, keeping the in-flight commit records. */
  const writePending = (j: Journal, edits: readonly PendingEdit[]): Promise<void> =>
    j.write([...j.all.filter(isInFlight), ...edits]);

  /**
   * Finish the index update of agent commits whose process died after the branch moved (the
   * journal still holds their in-flight record): for exactly their paths, an index entry that still
   * holds the parent commit's entry (or is absent where the parent had none) is set to the
   * commit's; one that holds anything else is the user's staging since and is left, with a warning.
   * A record whose commit is not HEAD (it never landed, or the user has moved on) is dropped. While
   * a merge, rebase… is in progress nothing is done: the records wait. Under the lock of `repo.root`.
   */
  const finishInFlight = async (repo: RepoState, j: Journal): Promise<RecoveredCommit[]> => {
    const all = j.all;
    const flights = all.filter(isInFlight);
    if (flights.length === 0 || repo.operations.length > 0) return [];
    const recovered: RecoveredCommit[] = [];
    for (const e of flights) {
      const f = e.inFlight!;
      if (!validFlight(f) || repo.head !== f.commit) continue;
      const paths = [...f.paths];
      const [before, after] = await Promise.all([
        engine.treeEntries(repo, f.parent, paths),
        engine.treeEntries(repo, f.commit, paths),
      ]);
      const updates = paths
        .map((path, i) => ({ path, expect: before[i]!, entry: after[i]! }))
        .filter((u) => !sameEntry(u.expect, u.entry));
      const found = updates.length === 0 ? [] : await engine.updateIndex(repo, updates);
      const set: string[] = [];
      const left: string[] = [];
      updates.forEach((u, i) => {
        const was = found[i] ?? null;
        if (was !== null && sameEntry(was, u.expect)) set.push(u.path);
        else if (was === null || !sameEntry(was, u.entry)) left.push(u.path);
      });
      const warning =
        left.length === 0
          ? null
          : `an interrupted auto-commit (${f.commit.slice(0, 12)}) could not finish updating the index: you have staged changes of your own on ${left.join(', ')} since, left as they are — check \`git status\` before committing`;
      recovered.push(
        Object.freeze({ commit: f.commit, paths: Object.freeze(set), userPaths: Object.freeze(left), warning }),
      );
    }
    await j.write(all.filter((x) => !isInFlight(x)));
    return recovered;
  };

  /** The current content of the dirty paths that pending edits name: the only files ever hashed. */
  const currentOfPending = async (
    repo: RepoState,
    paths: readonly string[],
    pending: readonly PendingEdit[],
  ): Promise<Map<string, FileState>> => {
    const named = new Set(pending.flatMap((e) => e.files.map((f) => f.path)));
    const wanted = paths.filter((p) => named.has(p));
    const current = new Map<string, FileState>();
    if (wanted.length > 0) for (const f of await engine.hashPaths(repo, wanted)) current.set(f.path, f);
    return current;
  };

  /** For each path, the newest pending edit whose recorded bytes it still holds. */
  const ownersOf = (pending: readonly PendingEdit[], current: Map<string, FileState>): Map<string, number> => {
    const owners = new Map<string, number>();
    pending.forEach((e, i) => {
      for (const f of e.files) {
        const now = current.get(f.path);
        if (now && sameFile(now, f)) owners.set(f.path, i);
      }
    });
    return owners;
  };

  async function beforeTurn(workdirInput: string): Promise<ProjectSnapshot> {
    const workdir = requireWorkdir(workdirInput);
    const snapshot = (
      state: WorkdirState['kind'],
      root: string | null,
      head: string | null,
      dirty: string[],
      agentDirty: string[] = [],
    ): ProjectSnapshot =>
      Object.freeze({
        version: 1 as const,
        workdir,
        root,
        state,
        head,
        takenAt: now(),
        dirty: Object.freeze(dirty),
        agentDirty: Object.freeze(agentDirty),
      });
    const first = await engine.inspect(workdir);
    if (first.kind === 'missing' || first.kind === 'not-a-directory') return snapshot(first.kind, null, null, []);
    return lock(lockKey(first, workdir), async () => {
      const state = await engine.inspect(workdir);
      if (state.kind === 'not-a-repository') return snapshot(state.kind, null, null, [...state.entries].sort());
      if (state.kind !== 'repository') return snapshot(state.kind, null, null, []);
      const { repo } = state;
      if (repo.unsupported !== null) return snapshot(state.kind, repo.root, repo.head, []);
      // The one write beforeTurn may make: finishing an interrupted agent commit, so its paths are not taken for the user's.
      // A lock file someone's git holds (or a killed one left) stops only that: the record waits for afterTurn, the snapshot is taken as things are (the agent's paths then count as the user's: the safe side).
      const j = await openJournal(repo.root);
      const recovered = await finishInFlight(repo, j).catch((err: unknown) => {
        if (isEntityGitError(err, 'REF_LOCKED')) return [];
        throw err;
      });
      const dirty = (await engine.status(repo)).map((c) => c.path);
      const pending = freshPending(j);
      const owners = ownersOf(pending, await currentOfPending(repo, dirty, pending));
      const taken = snapshot(
        state.kind,
        repo.root,
        repo.head,
        dirty.filter((p) => !owners.has(p)),
        dirty.filter((p) => owners.has(p)),
      );
      return recovered.length === 0 ? taken : Object.freeze({ ...taken, recovered: Object.freeze(recovered) });
    });
  }

  const skip = (
    reason: Exclude<SkipReason, 'nothing-to-commit'>,
    warning: string,
    extra: Partial<Pick<SkippedResult, 'userPaths' | 'agentPaths' | 'ignoredPaths' | 'deferred'>> = {},
  ): SkippedResult =>
    Object.freeze({
      status: 'skipped' as const,
      reason,
      warning,
      userPaths: [],
      agentPaths: [],
      deferred: [],
      ignoredPaths: [],
      ...extra,
    });

  /** The user's paths before the turn, relative to `repo`; null when the snapshot cannot say. */
  function userBefore(t: Turn, repo: RepoState): { user: readonly string[]; agent: ReadonlySet<string> } | null {
    const s = t.snapshot;
    if (s === null) return null;
    if (s.root === repo.root) return { user: s.dirty, agent: new Set(s.agentDirty) };
    // A directory that had no repository: everything in it then was the user's.
    if (s.root === null && s.state === 'not-a-repository')
      return { user: s.dirty.map((e) => (repo.prefix === '' ? e : `${repo.prefix}/${e}`)), agent: new Set() };
    if (s.root === null && s.state === 'missing') return { user: [], agent: new Set() };
    return null;
  }

  async function commitFiles(
    repo: RepoState,
    j: Journal,
    who: { sessionId: string; turn: number; subject: string; model: string; sessionCommit: string | null; at: number },
    paths: string[],
    expect?: FileState[],
  ): Promise<CommitDone | null> {
    const committer = { name: agentName(who.model, product), email, time: Math.floor(now() / 1000) };
    const authorSig = { ...(author ?? committer), time: Math.floor(who.at / 1000) };
    const message = projectCommitMessage(who.sessionId, who.turn, who.subject, who.sessionCommit);
    // The commit is recorded in the journal before the branch moves and forgotten once the index
    // holds it: a record left behind means the process died in between (see finishInFlight).
    const sorted = [...paths].sort();
    const beforeBranchMoves = async (commit: string): Promise<void> => {
      const record: PendingEdit = {
        sessionId: who.sessionId,
        turn: who.turn,
        subject: who.subject,
        model: who.model,
        sessionCommit: who.sessionCommit,
        at: who.at,
        files: [],
        inFlight: { commit, parent: repo.head, branch: repo.branch!, paths: sorted },
      };
      await j.write([...j.all, record]);
    };
    const request = {
      paths: sorted,
      message,
      author: authorSig,
      committer,
      reflogMessage: `commit: ${message.slice(0, message.indexOf('\n'))}`,
      beforeBranchMoves,
    };
    const done = await engine.commit(repo, expect ? { ...request, expect } : request);
    if (done !== null && j.all.some((e) => e.inFlight?.commit === done.commit))
      await j.write(j.all.filter((e) => e.inFlight?.commit !== done.commit));
    return done;
  }

  async function attempt(
    t: Turn,
    recovered: RecoveredCommit[],
    seen: { mine: readonly string[]; ignored: readonly string[] },
  ): Promise<AfterTurnResult> {
    const first = await engine.inspect(t.workdir);
    if (first.kind === 'missing')
      return skip(
        'workdir-missing',
        `the project directory ${t.workdir} does not exist, the agent's edits won't be auto-committed`,
      );
    if (first.kind === 'not-a-directory')
      return skip(
        'workdir-not-a-directory',
        `the project path ${t.workdir} is not a directory, the agent's edits won't be auto-committed`,
      );
    const key = lockKey(first, t.workdir);
    return lock(key, async () => {
      let state = await engine.inspect(t.workdir);
      if (lockKey(state, t.workdir) !== key) throw new Retry();
      if (state.kind === 'missing' || state.kind === 'not-a-directory') throw new Retry();
      if (state.kind === 'not-a-repository') {
        const inside = t.touched
          .map((p) => toRepoPath(p, t.workdir, t.workdir, ''))
          .filter((p): p is string => p !== null);
        // No edit, no repository: a project directory becomes one on the agent's first commit.
        if (inside.length === 0)
          return Object.freeze({
            status: 'skipped' as const,
            reason: 'nothing-to-commit' as const,
            warning: null,
            deferred: [],
            ignoredPaths: [...t.touched],
          });
        await engine.init(t.workdir, initOptions);
        state = await engine.inspect(t.workdir);
        if (state.kind !== 'repository')
          throw new EntityGitError(
            'PROJECT_GIT_ERROR',
            `[${engine.name}] ${t.workdir} is still no repository after init`,
            { workdir: t.workdir, state: state.kind },
          );
      }
      if (state.kind === 'bare')
        return skip(
          'bare-repository',
          `the project directory is a bare repository (or inside a git directory): there is no working tree to commit, the agent's edits won't be auto-committed`,
        );
      let repo = state.repo;
      if (repo.unsupported !== null)
        return skip(
          'unsupported-repository',
          `${engine.name} cannot commit safely into this repository (${repo.unsupported}), the agent's edits won't be auto-committed`,
        );
      // Before anything is looked at: an earlier agent commit whose process died after its branch moved gets its index entries.
      const j = await openJournal(repo.root);
      recovered.push(...(await finishInFlight(repo, j)));
      const op = OPERATION_ORDER.find((o) => repo.operations.includes(o));
      if (op)
        return skip(
          `${op}-in-progress`,
          `${OPERATION_NAMES[op]} is in progress, the agent's edits won't be auto-committed until it is finished`,
        );
      if (repo.branch === null)
        return skip(
          'detached-head',
          `HEAD is detached, the agent's edits won't be auto-committed until a branch is checked out`,
        );

      const ignoredPaths: string[] = [];
      const touched = new Set<string>();
      for (const p of t.touched) {
        const r = toRepoPath(p, t.workdir, repo.root, repo.prefix);
        if (r === null) ignoredPaths.push(p);
        else touched.add(r);
      }
      const changes = await engine.status(repo);
      const before = userBefore(t, repo);
      // A path an interrupted commit's recovery left staged is the user's staging, whatever the snapshot says.
      const staged = new Set(recovered.flatMap((r) => r.userPaths));
      const wasUsers = (p: string) =>
        staged.has(p) || (before !== null && !before.agent.has(p) && before.user.some((e) => within(p, e)));

      const mine: string[] = [];
      seen.mine = mine;
      seen.ignored = ignoredPaths;
      const others: ChangedPath[] = [];
      const inSubmodules: string[] = [];
      for (const c of changes) {
        if (c.submodule && [...touched].some((p) => p !== c.path && within(p, c.path))) inSubmodules.push(c.path);
        else if (!c.conflicted && !c.submodule && touched.has(c.path) && !wasUsers(c.path)) mine.push(c.path);
        else others.push(c);
      }
      // The bytes the tools reported: a file of the agent's that holds others now was edited
      // during the turn by someone else (the user), and is theirs.
      const editedDuring: string[] = [];
      let expectMine: FileState[] | undefined;
      /** `mine` hashed, when the check below did it. */
      let hashedMine: FileState[] | null = null;
      if (t.written.length > 0 && mine.length > 0) {
        const reported = new Map<string, string | null>();
        for (const [p, oid] of t.written) {
          const r = toRepoPath(p, t.workdir, repo.root, repo.prefix);
          if (r !== null) reported.set(r, oid);
        }
        expectMine = [];
        hashedMine = await engine.hashPaths(repo, mine);
        for (const f of hashedMine) {
          if (!reported.has(f.path)) continue;
          if (f.oid === reported.get(f.path)) expectMine.push(f);
          else editedDuring.push(f.path);
        }
        if (editedDuring.length > 0) mine.splice(0, mine.length, ...mine.filter((p) => !editedDuring.includes(p)));
      }
      if (inSubmodules.length > 0) {
        return skip(
          'submodule-changes',
          `the agent edited files inside the submodule ${inSubmodules.join(', ')}, its edits won't be auto-committed`,
          { agentPaths: mine, ignoredPaths },
        );
      }

      // A change the agent did not make this turn is still an agent's if it holds the exact bytes
      // of a pending edit (another session whose turn ended first, or an earlier blocked turn).
      const pending = freshPending(j);
      const current = await currentOfPending(
        repo,
        others.filter((c) => !c.conflicted && !c.submodule).map((c) => c.path),
        pending,
      );
      const owners = ownersOf(pending, current);
      const userPaths = [
        ...others.filter((c) => c.conflicted || c.submodule || !owners.has(c.path)).map((c) => c.path),
        ...editedDuring,
      ].sort();

      if (userPaths.length > 0) {
        if (mine.length > 0 && (before !== null || withoutSnapshot === 'trust-touched')) {
          const files = hashedMine?.filter((f) => mine.includes(f.path)) ?? (await engine.hashPaths(repo, mine));
          const kept = pending
            .map((e) => ({ ...e, files: e.files.filter((f) => !mine.includes(f.path)) }))
            .filter((e) => e.files.length > 0);
          await writePending(j, [
            ...kept,
            {
              sessionId: t.sessionId,
              turn: t.turn,
              subject: t.subject,
              model: t.model,
              sessionCommit: t.sessionCommit,
              at: now(),
              files,
            },
          ]);
        }
        return skip('uncommitted-changes', UNCOMMITTED_CHANGES_WARNING, { userPaths, agentPaths: mine, ignoredPaths });
      }
      if (mine.length > 0 && before === null && withoutSnapshot === 'skip') {
        return skip(
          'no-snapshot',
          `no snapshot of the working tree was taken before the turn, the agent's edits won't be auto-committed`,
          { agentPaths: mine, ignoredPaths },
        );
      }

      // Nothing of the user's is uncommitted: land the pending edits, oldest first, then this turn's.
      const deferred: ProjectCommit[] = [];
      for (let i = 0; i < pending.length; i++) {
        const e = pending[i]!;
        const files = e.files.filter((f) => owners.get(f.path) === i);
        if (files.length === 0) continue;
        const done = await commitFiles(
          repo,
          j,
          e,
          files.map((f) => f.path),
          files,
        );
        if (done === null) continue;
        repo = { ...repo, head: done.commit };
        deferred.push(
          Object.freeze({
            commit: done.commit,
            branch: done.branch,
            sessionId: e.sessionId,
            turn: e.turn,
            paths: done.entries.map((f) => f.path),
          }),
        );
        await writePending(j, pending.slice(i + 1));
      }
      if (pending.length > 0) await writePending(j, []);

      const done = mine.length === 0 ? null : await commitFiles(repo, j, { ...t, at: now() }, mine, expectMine);
      if (done === null)
        return Object.freeze({
          status: 'skipped' as const,
          reason: 'nothing-to-commit' as const,
          warning: null,
          deferred,
          ignoredPaths,
        });
      return Object.freeze({
        status: 'committed' as const,
        commit: done.commit,
        branch: done.branch,
        sessionId: t.sessionId,
        turn: t.turn,
        paths: done.entries.map((f) => f.path),
        deferred,
        ignoredPaths,
      });
    });
  }

  async function afterTurn(input: AfterTurnInput): Promise<AfterTurnResult> {
    const t = validTurn(input);
    const recovered: RecoveredCommit[] = [];
    for (let n = 1; ; n++) {
      const seen: { mine: readonly string[]; ignored: readonly string[] } = { mine: [], ignored: [] };
      try {
        const result = await attempt(t, recovered, seen);
        return recovered.length === 0 ? result : Object.freeze({ ...result, recovered: Object.freeze([...recovered]) });
      } catch (err) {
        // Someone's git holds `index.lock` or the branch's lock (an amend whose editor is open, or a
        // lock a killed git left): the engines move nothing then, so this is a skip, not a failure.
        if (isEntityGitError(err, 'REF_LOCKED') && err.data.committed !== true) {
          const what = typeof err.data.lock === 'string' ? err.data.lock : 'a lock file';
          const result = skip(
            'repository-locked',
            `another git is using the repository (${what} exists), the agent's edits won't be auto-committed for now`,
            { agentPaths: [...seen.mine], ignoredPaths: [...seen.ignored] },
          );
          return recovered.length === 0
            ? result
            : Object.freeze({ ...result, recovered: Object.freeze([...recovered]) });
        }
        // The branch, a file or the repository itself moved between looking and committing: look again.
        const moved =
          err instanceof Retry || isEntityGitError(err, 'REF_CONFLICT') || isEntityGitError(err, 'WORKTREE_CHANGED');
        if (!moved) throw err;
        if (n >= ATTEMPTS) {
          if (err instanceof Retry)
            throw new EntityGitError(
              'PROJECT_GIT_ERROR',
              `[${engine.name}] ${t.workdir} kept changing while the agent's commit was prepared`,
              { workdir: t.workdir },
            );
          throw err;
        }
      }
    }
  }

  return Object.freeze({ engine: engine.name, beforeTurn, afterTurn: observeAfterTurn(options.logger, afterTurn) });
}
