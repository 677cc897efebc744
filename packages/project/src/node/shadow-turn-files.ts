// What a turn changed, from its two shadow snapshots: the paths with their added and removed
// lines and who changed each (the agent's tools, or otherwise: its shell, any tool, the user), and
// one file's unified diff. docs/design.md §7, "Shadow mode".
import type { TurnFileStatus, TurnFiles, TurnSnapshots } from '@entity-git/core';
import { EntityGitError } from '@entity-git/core';
import { parseSnapshotMessage } from '../shadow-message.js';
import type { ShadowRepository } from './shadow-repository.js';
import { turnRef } from '../shadow-names.js';

export { turnRef } from '../shadow-names.js';

/** The turn's snapshots; throws `SNAPSHOT_NOT_FOUND` when it has none. */
export async function turnSnapshots(repo: ShadowRepository, sessionId: string, turn: number): Promise<TurnSnapshots> {
  const after = await repo.git.run(['rev-parse', '-q', '--verify', `${turnRef(sessionId, turn, 'after')}^{commit}`]);
  if (after.code !== 0)
    throw new EntityGitError(
      'SNAPSHOT_NOT_FOUND',
      `turn ${turn} of session ${JSON.stringify(sessionId)} has no snapshots in the project's shadow repository`,
      { sessionId, turn },
    );
  const afterCommit = after.stdout.toString('utf8').trim();
  const message = await repo.git.git(['cat-file', 'commit', afterCommit]);
  const trailers = parseSnapshotMessage(message.slice(message.indexOf('\n\n') + 2));
  const before = trailers?.before ?? (await repo.git.git(['rev-parse', `${afterCommit}^1`])).trim();
  return {
    sessionId,
    turn,
    before,
    after: afterCommit,
    sessionCommit: trailers?.sessionCommit ?? null,
    agentPaths: trailers?.agentPaths ?? [],
  };
}

const STATUS: Record<string, TurnFileStatus> = { A: 'added', M: 'modified', D: 'deleted', T: 'type-changed' };

/** The paths a turn changed, sorted, with their line counts and who changed them. */
export async function listTurnFiles(repo: ShadowRepository, sessionId: string, turn: number): Promise<TurnFiles> {
  const snaps = await turnSnapshots(repo, sessionId, turn);
  const base = ['diff-tree', '-r', '-z', '--no-renames', '--no-ext-diff', '--no-textconv'];
  const raw = (await repo.git.git([...base, '--raw', snaps.before, snaps.after])).split('\0');
  const statuses = new Map<string, TurnFileStatus>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const letter = (raw[i] as string).slice(-1);
    statuses.set(raw[i + 1] as string, STATUS[letter] ?? 'modified');
  }
  const numstat = (await repo.git.git([...base, '--numstat', snaps.before, snaps.after])).split('\0');
  const counts = new Map<string, [number | null, number | null]>();
  for (const row of numstat) {
    const m = /^(\d+|-)\t(\d+|-)\t([\s\S]+)$/.exec(row);
    if (m) counts.set(m[3] as string, [m[1] === '-' ? null : Number(m[1]), m[2] === '-' ? null : Number(m[2])]);
  }
  const tools = new Set(snaps.agentPaths);
  const files = [...statuses]
    .map(([path, status]) => {
      const [added, removed] = counts.get(path) ?? [null, null];
      return { path, status, added, removed, by: tools.has(path) ? ('tools' as const) : ('other' as const) };
    })
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { ...snaps, files };
}

/** One file's unified diff across the turn (`''` when the turn did not change it). */
export async function turnFileDiff(
  repo: ShadowRepository,
  sessionId: string,
  turn: number,
  path: string,
): Promise<string> {
  const snaps = await turnSnapshots(repo, sessionId, turn);
  return repo.git.git([
    'diff',
    '--no-color',
    '--no-ext-diff',
    '--no-textconv',
    '--no-renames',
    snaps.before,
    snaps.after,
    '--',
    path,
  ]);
}
