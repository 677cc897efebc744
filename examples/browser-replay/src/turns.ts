// A checkout's messages cut into turns. A commit's `node` is the last node of its turn, so the
// messages of turn k are those after turn k-1's last node, up to and including turn k's. The
// messages are the path to one commit of one branch, so every turn end is a commit of that
// branch's history; anything after the last known end belongs to the current turn.
import type { DagNode } from '@entity-git/core';
import type { TimelineCommit } from 'ws-server/protocol';

export interface TurnGroup {
  turn: number;
  messages: DagNode[];
}

export function groupTurns(
  messages: readonly DagNode[],
  commits: readonly (TimelineCommit | undefined)[],
  currentTurn: number,
): TurnGroup[] {
  const ends = new Map<string, number>();
  for (const c of commits) if (c && c.node !== null && c.turn !== null) ends.set(c.node, c.turn);
  const groups: TurnGroup[] = [];
  let open: DagNode[] = [];
  for (const m of messages) {
    open.push(m);
    const turn = ends.get(m.id);
    if (turn !== undefined && turn < currentTurn) {
      groups.push({ turn, messages: open });
      open = [];
    }
  }
  if (open.length > 0 || groups.length === 0) groups.push({ turn: currentTurn, messages: open });
  return groups;
}

/** The first user message of a turn, folded to one line and cut at `max` code points. */
export function turnGist(group: TurnGroup, max = 60): string {
  const user = group.messages.find((m) => m.role === 'user');
  const text = user === undefined ? '' : typeof user.content === 'string' ? user.content : JSON.stringify(user.content);
  const folded = text.replace(/\s+/g, ' ').trim();
  const points = [...folded];
  return points.length > max ? `${points.slice(0, max - 1).join('')}…` : folded;
}
