// The shadow repository's commit messages: a subject for people, trailers for entity-git. The
// trailers link a snapshot with its session's turn (docs/design.md §7, "Shadow mode").

export type SnapshotKind = 'before' | 'after' | 'restore';

export interface SnapshotTrailers {
  kind: SnapshotKind;
  sessionId?: string | undefined;
  turn?: number | undefined;
  /** The session repository's commit of the turn (after-snapshots, when known). */
  sessionCommit?: string | null | undefined;
  /** The snapshot taken before the turn (after-snapshots). */
  before?: string | undefined;
  /** Paths the agent's own tools reported writing (after-snapshots), workdir-relative. */
  agentPaths?: readonly string[] | undefined;
  /** Files left out of the snapshot for being over the size cap. */
  overSizeCap?: readonly string[] | undefined;
  /** For a restore: the turn whose files it put back, `<session> <turn>`. */
  restoreOf?: string | undefined;
}

export function snapshotMessage(t: SnapshotTrailers): string {
  const subject =
    t.kind === 'restore'
      ? `entity-git snapshot: before restoring turn ${t.restoreOf ?? ''}`
      : t.sessionId !== undefined
        ? `entity-git snapshot: ${t.kind} turn ${t.turn ?? '?'} of ${t.sessionId}`
        : `entity-git snapshot: ${t.kind} a turn`;
  const lines = [`Snapshot: ${t.kind}`];
  if (t.sessionId !== undefined) lines.push(`Session-Id: ${t.sessionId}`);
  if (t.turn !== undefined) lines.push(`Turn: ${t.turn}`);
  if (t.sessionCommit) lines.push(`Session-Commit: ${t.sessionCommit}`);
  if (t.before !== undefined) lines.push(`Before-Snapshot: ${t.before}`);
  if (t.restoreOf !== undefined) lines.push(`Restore-Of: ${t.restoreOf}`);
  // JSON keeps any file name (newlines included) on one trailer line.
  if (t.agentPaths !== undefined) lines.push(`Agent-Paths: ${JSON.stringify(t.agentPaths)}`);
  if (t.overSizeCap?.length) lines.push(`Over-Size-Cap: ${JSON.stringify(t.overSizeCap)}`);
  return `${subject.replace(/\s+/g, ' ').slice(0, 200)}\n\n${lines.join('\n')}\n`;
}

function jsonList(v: string | undefined): string[] | undefined {
  if (v === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(v);
    return Array.isArray(parsed) ? parsed.filter((p): p is string => typeof p === 'string') : undefined;
  } catch {
    return undefined;
  }
}

/** The trailers of a snapshot commit's message; null when it is not one. */
export function parseSnapshotMessage(message: string): SnapshotTrailers | null {
  const fields = new Map<string, string>();
  for (const line of message.split('\n')) {
    const m = /^([A-Za-z-]+): (.*)$/.exec(line);
    if (m) fields.set(m[1] as string, m[2] as string);
  }
  const kind = fields.get('Snapshot');
  if (kind !== 'before' && kind !== 'after' && kind !== 'restore') return null;
  const turn = fields.get('Turn');
  return {
    kind,
    sessionId: fields.get('Session-Id'),
    turn: turn !== undefined && /^\d+$/.test(turn) ? Number(turn) : undefined,
    sessionCommit: fields.get('Session-Commit') ?? null,
    before: fields.get('Before-Snapshot'),
    agentPaths: jsonList(fields.get('Agent-Paths')),
    overSizeCap: jsonList(fields.get('Over-Size-Cap')),
    restoreOf: fields.get('Restore-Of'),
  };
}
