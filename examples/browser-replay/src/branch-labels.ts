// Branch names say how a branch was made (`retry-<node>`, `fork-<node>`), not what it is. A label
// says it in words from the branch's own history: where it leaves main (the first of its commits
// main does not have) and the user message of that turn, from the commit subject
// (`turn N: <message>`). "retry of turn 4"; "edit at turn 2: 'Actually, only look…'".
import type { BranchSummary, TimelineCommit } from 'ws-server/protocol';

export interface BranchFork {
  /** The first turn that differs from main. */
  turn: number;
  /** That turn's user message on this branch (from its subject), and on main (null: main has no such turn). */
  here: string;
  main: string | null;
}

const GIST = 24;

function subjectText(subject: string): string {
  return subject.replace(/^turn \d+:\s*/, '');
}

function cut(text: string, max: number): string {
  const points = [...text];
  return points.length > max ? `${points.slice(0, max - 1).join('')}…` : text;
}

/** Where `commits` (newest first) leaves `main` (newest first); null when it does not. */
export function forkOf(commits: readonly TimelineCommit[], main: readonly TimelineCommit[]): BranchFork | null {
  const onMain = new Set(main.map((c) => c.sha));
  const first = [...commits].reverse().find((c) => !onMain.has(c.sha));
  if (!first || first.turn === null) return null;
  const mainTurn = main.find((c) => c.turn === first.turn);
  return { turn: first.turn, here: subjectText(first.subject), main: mainTurn ? subjectText(mainTurn.subject) : null };
}

export function branchLabel(branch: Pick<BranchSummary, 'name'>, fork: BranchFork | null): string {
  if (branch.name === 'main' || fork === null) return branch.name;
  if (branch.name.startsWith('retry-')) return `retry of turn ${fork.turn}`;
  return `${fork.main === null ? 'new' : 'edit'} at turn ${fork.turn}: '${cut(fork.here, GIST)}'`;
}
