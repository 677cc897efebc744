import { EntityGitError, assertIdentity, isOid } from '@entity-git/git';
import { assertId } from '@entity-git/core';
import { foldLine } from '@entity-git/core';
import { isAbsolute, normalizeAbsolute } from './paths.js';
import type { AfterTurnInput, AgentCommitsInput, ProjectSnapshot, RevertInput } from '@entity-git/core';
import type { ProjectGitOptions } from './project-git-types.js';
import { CRUD, tidy } from './commit-message.js';

/** A branch name `git check-ref-format --branch` accepts (the common rules; git has the last word). */
export const BRANCH =
  /^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*@\{)(?!.*\.lock(?:\/|$))(?!.*\/\.)(?!\.)[^\x00-\x20\x7f~^:?*[\\]+(?<![./])$/;

export function requireWorkdir(workdir: unknown): string {
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

export interface Turn {
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

export function validTurn(input: AfterTurnInput): Turn {
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

/** The options checked (`INVALID_OPTION` for a bad one) and the committer's parts made as every engine writes them. */
export function checkOptions(options: ProjectGitOptions) {
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
  return { engine, product, email, author, withoutSnapshot };
}

/** The undo's input checked: `INVALID_OPTION`, `INVALID_WORKDIR` or `INVALID_ID` for a bad one. */
export function validRevert(input: RevertInput): {
  workdir: string;
  sessionId: string;
  turn: number | null;
  commit: string | null;
} {
  if (typeof input !== 'object' || input === null)
    throw new EntityGitError('INVALID_OPTION', 'revertAgentTurn needs an input object');
  const workdir = requireWorkdir(input.workdir);
  assertId(input.sessionId, 'sessionId');
  const turn = input.turn ?? null;
  const commit = input.commit ?? null;
  if (turn !== null && (!Number.isSafeInteger(turn) || turn < 1))
    throw new EntityGitError('INVALID_OPTION', `turn must be a positive integer: ${String(turn)}`);
  if (commit !== null && !isOid(commit))
    throw new EntityGitError('INVALID_OPTION', `commit must be 40 lowercase hex digits: ${JSON.stringify(commit)}`);
  if (turn === null && commit === null)
    throw new EntityGitError('INVALID_OPTION', 'revertAgentTurn needs a turn or a commit');
  return { workdir, sessionId: input.sessionId, turn, commit };
}

/** The agent-commit list's input checked, with its default limit of 100. */
export function validAgentCommits(input: AgentCommitsInput): { workdir: string; sessionId: string; limit: number } {
  if (typeof input !== 'object' || input === null)
    throw new EntityGitError('INVALID_OPTION', 'agentCommits needs an input object');
  const workdir = requireWorkdir(input.workdir);
  assertId(input.sessionId, 'sessionId');
  const limit = input.limit ?? 100;
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new EntityGitError('INVALID_OPTION', `limit must be a positive integer: ${String(limit)}`);
  return { workdir, sessionId: input.sessionId, limit };
}
