import { textOf, type BranchInfo, type CommitInfo, type DagNode, type TurnView } from '@entity-git/core';
import { isOid } from '@entity-git/git';
import { CliError } from '../cli-error.js';
import { requireRepository, type Context } from '../context.js';
import { EXIT_OK, type ExitCode } from '../exit-codes.js';
import { printJson, println, type CliIo } from '../io.js';
import { branchJson, commitJson, showJson, type BranchesJson, type LogJson } from '../json-shapes.js';

// log, show and branches: read-only views of a session repository (from objects alone; the
// working tree is never touched).

/** The branch a command walks: `--branch` (which must exist) or HEAD's; null when nothing is committed. */
async function pickBranch(
  ctx: Context,
  sessionId: string,
  branch: string | undefined,
): Promise<{ name: string | null; all: BranchInfo[] }> {
  const all = await ctx.mirror.branches(sessionId);
  if (branch === undefined) return { name: all.find((b) => b.head)?.name ?? null, all };
  if (!all.some((b) => b.name === branch)) {
    throw new CliError(
      `session ${JSON.stringify(sessionId)} has no branch ${JSON.stringify(branch)} (branches: ${all.map((b) => b.name).join(', ') || 'none'})`,
    );
  }
  return { name: branch, all };
}

export async function runLog(
  ctx: Context,
  io: CliIo,
  args: { session: string; branch?: string | undefined; json: boolean },
): Promise<ExitCode> {
  await requireRepository(ctx, args.session);
  const { name } = await pickBranch(ctx, args.session, args.branch);
  const commits = name === null ? [] : await ctx.mirror.log(args.session, { branch: name });
  if (args.json) {
    printJson(io, {
      sessionId: args.session,
      branch: name,
      commits: commits.map(commitJson),
      recognised: ctx.recognised,
    } satisfies LogJson);
    return EXIT_OK;
  }
  if (commits.length === 0) println(io, `session ${args.session} has no commit yet`);
  for (const c of commits) println(io, `${c.sha.slice(0, 10)} ${isoTime(c.time)} ${c.subject}`);
  return EXIT_OK;
}

export async function runBranches(
  ctx: Context,
  io: CliIo,
  args: { session: string; json: boolean },
): Promise<ExitCode> {
  await requireRepository(ctx, args.session);
  const all = await ctx.mirror.branches(args.session);
  if (args.json) {
    printJson(io, {
      sessionId: args.session,
      head: all.find((b) => b.head)?.name ?? null,
      branches: all.map(branchJson),
      recognised: ctx.recognised,
    } satisfies BranchesJson);
    return EXIT_OK;
  }
  const width = Math.max(0, ...all.map((b) => b.name.length));
  for (const b of all)
    println(
      io,
      `${b.head ? '*' : ' '} ${b.name.padEnd(width)} ${b.commit.slice(0, 10)} ${b.turns} turn${b.turns === 1 ? '' : 's'}`,
    );
  return EXIT_OK;
}

const DECIMAL = /^[0-9]+$/;
const HEX_PREFIX = /^[0-9a-f]{4,40}$/i;

/**
 * TURN|SHA → a commit. A decimal number is a turn on the branch; a full id or a unique prefix of
 * at least 4 hex digits is a commit of any branch (with `--branch`, of that branch). A decimal
 * that is no turn of the branch is tried as a prefix, since short ids can be all digits.
 */
async function resolveCommit(
  ctx: Context,
  sessionId: string,
  target: string | undefined,
  branch: string | undefined,
): Promise<{ commit: string; branch: string | undefined }> {
  const picked = await pickBranch(ctx, sessionId, branch);
  if (picked.name === null) throw new CliError(`session ${JSON.stringify(sessionId)} has no commit yet`);
  const chain = await ctx.mirror.log(sessionId, { branch: picked.name });
  if (target === undefined) return { commit: chain[0]!.sha, branch };
  const fail = (why: string): never => {
    throw new CliError(why);
  };
  if (DECIMAL.test(target) && target.length < 40) {
    const n = Number(target);
    const hit = chain.find((c) => c.turn === n);
    if (hit) return { commit: hit.sha, branch: branch ?? picked.name };
    if (target.length < 4)
      fail(`branch ${picked.name} of session ${JSON.stringify(sessionId)} has turns 1..${chain.length}, not ${target}`);
  }
  if (!HEX_PREFIX.test(target))
    fail(`not a turn number or commit id: ${JSON.stringify(target)} (give a turn number, or 4 to 40 hex digits)`);
  const prefix = target.toLowerCase();
  const pool =
    branch !== undefined
      ? [chain]
      : await Promise.all(picked.all.map((b) => ctx.mirror.log(sessionId, { branch: b.name })));
  const matches = [
    ...new Set(
      pool
        .flat()
        .map((c: CommitInfo) => c.sha)
        .filter((sha) => sha.startsWith(prefix)),
    ),
  ];
  const where = branch !== undefined ? `on branch ${branch} of` : 'in';
  if (matches.length === 0) {
    if (DECIMAL.test(target))
      fail(
        `branch ${picked.name} of session ${JSON.stringify(sessionId)} has turns 1..${chain.length}, and no commit starts with ${target}`,
      );
    fail(
      `no commit ${isOid(prefix) ? prefix : `starting with ${prefix}`} ${where} session ${JSON.stringify(sessionId)}`,
    );
  }
  if (matches.length > 1)
    fail(
      `commit prefix ${prefix} is ambiguous ${where} session ${JSON.stringify(sessionId)}: ${matches.map((m) => m.slice(0, 12)).join(', ')}`,
    );
  return { commit: matches[0]!, branch };
}

export async function runShow(
  ctx: Context,
  io: CliIo,
  args: { session: string; target?: string | undefined; branch?: string | undefined; json: boolean },
): Promise<ExitCode> {
  await requireRepository(ctx, args.session);
  const { commit, branch } = await resolveCommit(ctx, args.session, args.target, args.branch);
  const view = await ctx.mirror.read(args.session, commit, branch === undefined ? {} : { branch });
  if (args.json) {
    printJson(io, showJson(view, ctx.recognised));
    return EXIT_OK;
  }
  printView(io, view);
  return EXIT_OK;
}

function printView(io: CliIo, v: TurnView): void {
  println(io, `session ${v.sessionId}, branch ${v.branch}, turn ${v.turn} / ${v.turns}`);
  println(io, `commit ${v.commit}`);
  println(io, `prev   ${v.prev ?? '-'}`);
  println(io, `next   ${v.next ?? '-'}`);
  // The messages of a commit are one path in seq order, so turns start at its user nodes
  // (leading system nodes belong to turn 1), as the mirror cuts them.
  let turn = 0;
  let seenUser = false;
  for (const m of v.messages) {
    if (turn === 0 || (m.role === 'user' && seenUser)) println(io, `\n-- turn ${++turn} --`);
    if (m.role === 'user') seenUser = true;
    println(io, formatMessage(m));
  }
}

function formatMessage(m: DagNode): string {
  const tool =
    m.role === 'tool' &&
    m.metadata !== null &&
    typeof m.metadata === 'object' &&
    !Array.isArray(m.metadata) &&
    typeof m.metadata.tool === 'string'
      ? ` (${m.metadata.tool})`
      : '';
  const text = textOf(m.content) || (m.content === null || m.content === '' ? '' : JSON.stringify(m.content));
  const body = text.replace(/\r\n?/g, '\n').split('\n').join('\n    ');
  return `#${m.seq} ${m.role} ${m.id}${tool}: ${body}`;
}

function isoTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}
