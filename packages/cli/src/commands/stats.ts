import { sessionStats, type StatsBranch } from '@entity-git/core';
import { requireSession, type Context } from '../context.js';
import { EXIT_OK, type ExitCode } from '../exit-codes.js';
import { printJson, println, type CliIo } from '../io.js';

// stats: tokens and cost per turn, per branch and for the session, from the DAG as the mirror
// derives it (core's `session_stats`; docs/design.md, 'Retention and accounting').

/** `stats --json` (docs/cli-json.md): null where no node records a figure. */
export interface StatsJson {
  sessionId: string;
  /** Every node of the session once, however many branches share it. */
  tokens: number | null;
  cost: number | null;
  branches: {
    name: string;
    head: boolean;
    tokens: number | null;
    cost: number | null;
    turns: {
      turn: number;
      node: string;
      seq: number;
      complete: boolean;
      commit: string | null;
      tokens: number | null;
      cost: number | null;
    }[];
  }[];
  recognised: string | null;
}

const figures = (x: { tokens: number | null; cost: number | null }) =>
  `${x.tokens === null ? 'no tokens recorded' : `${x.tokens} tokens`}${x.cost === null ? '' : `, cost ${x.cost}`}`;

export async function runStats(
  ctx: Context,
  io: CliIo,
  args: { session: string; branch: string | undefined; json: boolean },
): Promise<ExitCode> {
  await requireSession(ctx, args.session);
  const stats = await sessionStats({ dag: ctx.dag, mirror: ctx.mirror }, args.session, args.branch);
  if (args.json) {
    printJson(io, {
      sessionId: stats.session_id,
      tokens: stats.tokens,
      cost: stats.cost,
      branches: stats.branches,
      recognised: ctx.recognised,
    } satisfies StatsJson);
    return EXIT_OK;
  }
  println(io, `session ${args.session}: ${figures(stats)}`);
  for (const b of stats.branches) printBranch(io, b);
  return EXIT_OK;
}

function printBranch(io: CliIo, b: StatsBranch): void {
  println(io, `${b.head ? '*' : ' '} ${b.name}: ${figures(b)}`);
  const width = String(b.turns.length).length;
  for (const t of b.turns)
    println(
      io,
      `    turn ${String(t.turn).padStart(width)}  ${t.commit === null ? (t.complete ? 'not synced' : 'unfinished') : t.commit.slice(0, 10)}  ${figures(t)}`,
    );
}
