import { type DagNode, derive, isEntityGitError, nodeFacts } from '@entity-git/core';
import type { Context } from '../context.js';
import { EXIT_OK, type ExitCode } from '../exit-codes.js';
import { printJson, println, type CliIo } from '../io.js';
import { printable } from '../printable.js';

export interface DryRunArgs {
  session?: string | undefined;
  json: boolean;
}

/** Sessions listed in the text output at most (the JSON lists them all). */
const LISTED = 20;

/** A problem found in how the rows read, for a person to look at before the first sync. */
export interface DryRunProblem {
  kind: 'several-roots' | 'missing-predecessor' | 'missing-caller' | 'open-turn' | 'unreadable';
  nodeId: string | null;
  detail: string;
}

/**
 * `entity-git sync --dry-run`: how entity-git reads the database, before anything is written —
 * the schema or mapping, the sessions, one session's nodes in role, parent, turn and branch
 * terms, and the problems found. Reads only; no repository is made.
 */
export async function runDryRun(ctx: Context, io: CliIo, args: DryRunArgs): Promise<ExitCode> {
  const dag = ctx.dag;
  const sessions = await dag.listSessions();
  const sessionId = args.session ?? sessions[0] ?? null;
  const reading = ctx.reading ?? "entity-git's own schema (sessions, nodes), read and written by entity-git";
  const counts: { id: string; nodes: number }[] = [];
  for (const id of sessions.slice(0, args.json ? sessions.length : LISTED))
    counts.push({ id, nodes: await count(ctx, id) });
  const detail = sessionId === null ? null : await inspect(ctx, sessionId);
  if (args.json) {
    printJson(io, { recognised: ctx.recognised, reading, sessions: counts, session: detail });
    return EXIT_OK;
  }
  println(io, `reading: ${reading}`);
  println(io, `sessions: ${sessions.length}${sessions.length > LISTED ? ` (the first ${LISTED})` : ''}`);
  for (const c of counts)
    println(io, `  ${printable(c.id)}  ${c.nodes} node${c.nodes === 1 ? '' : 's'}${c.nodes === 0 ? ' (empty)' : ''}`);
  if (detail === null) return EXIT_OK;
  println(io, `session ${printable(detail.id)}: ${detail.nodes.length} nodes, HEAD ${detail.head ?? 'none'}`);
  println(io, '  seq  role       id                 parent             turn  branch');
  for (const n of detail.nodes)
    println(
      io,
      `  ${String(n.seq).padEnd(4)} ${n.role.padEnd(10)} ${printable(n.id).padEnd(18)} ${printable(n.parent ?? '-').padEnd(18)} ${String(n.turn ?? '-').padEnd(5)} ${n.branches.join(', ')}${n.pending ? '  (open)' : ''}  ${n.text}`,
    );
  println(io, detail.problems.length === 0 ? 'problems: none' : 'problems:');
  for (const p of detail.problems)
    println(io, `  ${p.kind}${p.nodeId === null ? '' : ` ${printable(p.nodeId)}`}: ${p.detail}`);
  return EXIT_OK;
}

async function count(ctx: Context, id: string): Promise<number> {
  let n = 0;
  for await (const _ of ctx.dag.nodesAfter(id, 0)) n++;
  return n;
}

/** One session's nodes as the mirror would read them: turns, branches, and what looks wrong. */
async function inspect(ctx: Context, sessionId: string) {
  const nodes: DagNode[] = [];
  const problems: DryRunProblem[] = [];
  try {
    for await (const n of ctx.dag.nodesAfter(sessionId, 0)) nodes.push(n);
  } catch (err) {
    problems.push({ kind: 'unreadable', nodeId: null, detail: isEntityGitError(err) ? err.message : String(err) });
  }
  const session = await ctx.dag.getSession(sessionId);
  const ids = new Set(nodes.map((n) => n.id));
  const facts = nodes.map((n) => nodeFacts(n));
  for (const n of nodes) {
    if (n.predecessor !== null && !ids.has(n.predecessor))
      problems.push({
        kind: 'missing-predecessor',
        nodeId: n.id,
        detail: `its predecessor ${JSON.stringify(n.predecessor)} is no node of the session`,
      });
    if (n.caller !== null && !ids.has(n.caller))
      problems.push({
        kind: 'missing-caller',
        nodeId: n.id,
        detail: `its caller ${JSON.stringify(n.caller)} is no node of the session`,
      });
  }
  const roots = nodes.filter((n) => n.predecessor === null && n.caller === null);
  if (roots.length > 1)
    problems.push({
      kind: 'several-roots',
      nodeId: null,
      detail: `${roots.length} nodes continue from none (${roots
        .slice(0, 5)
        .map((r) => r.id)
        .join(
          ', ',
        )}${roots.length > 5 ? ', …' : ''}): each starts a path of its own; a mapping without a predecessor reads every row as a root`,
    });
  const turnOf = new Map<string, number>();
  const branchesOf = new Map<string, string[]>();
  let head: string | null = null;
  try {
    const d = derive(facts, session?.head ?? null);
    head = d.head;
    for (const b of d.branches) {
      for (const t of b.turns)
        for (const n of t.nodes) {
          turnOf.set(n.id, t.index);
          branchesOf.set(n.id, [...(branchesOf.get(n.id) ?? []), b.name]);
        }
      if (b.complete < b.turns.length) {
        const open = b.turns.at(-1)!.nodes.filter((n) => n.pending);
        problems.push({
          kind: 'open-turn',
          nodeId: open[0]?.id ?? null,
          detail: `branch ${b.name}, turn ${b.turns.length}: not committed yet: ${open.map((n) => `${n.id} (${n.role}) is open`).join(', ')}; it is committed when a row completes it, or once the session is quiet (--quiet-time)`,
        });
      }
    }
  } catch (err) {
    problems.push({ kind: 'unreadable', nodeId: null, detail: isEntityGitError(err) ? err.message : String(err) });
  }
  return {
    id: sessionId,
    head,
    nodes: facts.map((f) => ({
      seq: f.seq,
      id: f.id,
      role: f.role,
      parent: f.predecessor ?? (f.caller === null ? null : `caller ${f.caller}`),
      turn: turnOf.get(f.id) ?? null,
      branches: branchesOf.get(f.id) ?? [],
      pending: f.pending,
      text: f.text.slice(0, 40),
    })),
    problems,
  };
}
