// What a turn changed, from its two shadow snapshots, on the object engine: the paths with their
// added and removed lines and who changed each, and one file's unified diff in git's format (the
// line diff is jsdiff's Myers diff, loaded on first use). docs/design.md §7, "Shadow mode".
import type { TurnFileStatus, TurnFiles, TurnSnapshots } from '@entity-git/core';
import { EntityGitError, fromUtf8 } from '@entity-git/git';
import { diffTrees, type TreeChange } from '../object-engine/tree-diff.js';
import { parseSnapshotMessage } from '../shadow-message.js';
import { turnRef } from '../shadow-names.js';
import type { ObjectShadowRepository } from './object-shadow-repository.js';

/** The turn's snapshots; throws `SNAPSHOT_NOT_FOUND` when it has none. */
export async function turnSnapshots(
  repo: ObjectShadowRepository,
  sessionId: string,
  turn: number,
): Promise<TurnSnapshots> {
  const after = await repo.resolve(turnRef(sessionId, turn, 'after'));
  if (after === null)
    throw new EntityGitError(
      'SNAPSHOT_NOT_FOUND',
      `turn ${turn} of session ${JSON.stringify(sessionId)} has no snapshots in the project's shadow repository`,
      { sessionId, turn },
    );
  const commit = await repo.commit(after);
  const trailers = parseSnapshotMessage(commit.message);
  return {
    sessionId,
    turn,
    before: trailers?.before ?? commit.parents[0]!,
    after,
    sessionCommit: trailers?.sessionCommit ?? null,
    agentPaths: trailers?.agentPaths ?? [],
  };
}

/** The file changes between two snapshots, sorted by path. */
export async function snapshotChanges(repo: ObjectShadowRepository, from: string, to: string): Promise<TreeChange[]> {
  const [a, b] = await Promise.all([repo.commit(from), repo.commit(to)]);
  return diffTrees(repo.objects, a.tree, b.tree);
}

function statusOf(c: TreeChange): TurnFileStatus {
  if (c.before === null) return 'added';
  if (c.after === null) return 'deleted';
  // A file and a link (or a submodule) are different kinds; an executable bit alone is a modification, as git's --raw says M.
  const kind = (mode: string) => (mode === '120000' ? 'link' : mode === '160000' ? 'gitlink' : 'file');
  return kind(c.before.mode) === kind(c.after.mode) ? 'modified' : 'type-changed';
}

/** Binary as git decides it: a NUL byte in the first 8000 bytes. */
const isBinary = (bytes: Uint8Array) => bytes.subarray(0, 8000).includes(0);

/** The bytes of each side of a change (empty for an absent side). */
async function sides(repo: ObjectShadowRepository, c: TreeChange): Promise<[Uint8Array, Uint8Array]> {
  const read = (v: TreeChange['before']) => (v === null ? Promise.resolve(new Uint8Array(0)) : repo.blob(v.oid));
  return Promise.all([read(c.before), read(c.after)]);
}

/** The paths a turn changed, sorted, with their line counts and who changed them. */
export async function listTurnFiles(repo: ObjectShadowRepository, sessionId: string, turn: number): Promise<TurnFiles> {
  const snaps = await turnSnapshots(repo, sessionId, turn);
  const tools = new Set(snaps.agentPaths);
  const { structuredPatch } = await import('diff');
  const files = [];
  for (const c of await snapshotChanges(repo, snaps.before, snaps.after)) {
    const [a, b] = await sides(repo, c);
    let added: number | null = null;
    let removed: number | null = null;
    if (!isBinary(a) && !isBinary(b)) {
      added = 0;
      removed = 0;
      for (const h of structuredPatch('a', 'b', fromUtf8(a), fromUtf8(b), '', '', { context: 0 }).hunks)
        for (const line of h.lines) {
          if (line[0] === '+') added++;
          else if (line[0] === '-') removed++;
        }
    }
    files.push({
      path: c.path,
      status: statusOf(c),
      added,
      removed,
      by: tools.has(c.path) ? 'tools' : 'other',
    } as const);
  }
  return { ...snaps, files };
}

/** One file's unified diff across the turn, as `git diff <before> <after> -- <path>` prints it (`''` when unchanged). */
export async function turnFileDiff(
  repo: ObjectShadowRepository,
  sessionId: string,
  turn: number,
  path: string,
): Promise<string> {
  const snaps = await turnSnapshots(repo, sessionId, turn);
  const change = (await snapshotChanges(repo, snaps.before, snaps.after)).find((c) => c.path === path);
  if (change === undefined) return '';
  const [a, b] = await sides(repo, change);
  return gitHeader(change) + (await gitBody(change, a, b));
}

/** An object id abbreviated as git abbreviates it in a small repository: 7 hex digits (`core.abbrev` auto). */
const short = (oid: string | undefined) => (oid ?? '0'.repeat(40)).slice(0, 7);

function gitHeader(c: TreeChange): string {
  const lines = [`diff --git a/${c.path} b/${c.path}`];
  if (c.before === null) lines.push(`new file mode ${c.after!.mode}`);
  else if (c.after === null) lines.push(`deleted file mode ${c.before.mode}`);
  else if (c.before.mode !== c.after.mode) lines.push(`old mode ${c.before.mode}`, `new mode ${c.after.mode}`);
  const sameMode = c.before !== null && c.after !== null && c.before.mode === c.after.mode;
  if (c.before?.oid !== c.after?.oid)
    lines.push(`index ${short(c.before?.oid)}..${short(c.after?.oid)}${sameMode ? ` ${c.after!.mode}` : ''}`);
  return `${lines.join('\n')}\n`;
}

/** git's default hunk-header function line: the nearest line above the hunk starting with a letter, `_` or `$`. */
function funcLine(oldLines: readonly string[], before: number): string {
  for (let i = before - 1; i >= 0; i--) {
    const line = oldLines[i]!;
    if (/^[A-Za-z_$]/.test(line)) return ` ${line.replace(/\s+$/, '').slice(0, 80)}`;
  }
  return '';
}

async function gitBody(c: TreeChange, a: Uint8Array, b: Uint8Array): Promise<string> {
  if (c.before?.oid === c.after?.oid) return '';
  const minus = c.before === null ? '/dev/null' : `a/${c.path}`;
  const plus = c.after === null ? '/dev/null' : `b/${c.path}`;
  if (isBinary(a) || isBinary(b)) return `Binary files ${minus} and ${plus} differ\n`;
  const { structuredPatch } = await import('diff');
  const oldText = fromUtf8(a);
  const oldLines = oldText.split('\n');
  // jsdiff numbers an empty side from the line after it; git from the line before.
  const range = (start: number, count: number) =>
    count === 1 ? `${start}` : `${count === 0 ? start - 1 : start},${count}`;
  let out = `--- ${minus}\n+++ ${plus}\n`;
  for (const h of structuredPatch('a', 'b', oldText, fromUtf8(b), '', '', { context: 3 }).hunks) {
    const head = `@@ -${range(h.oldStart, h.oldLines)} +${range(h.newStart, h.newLines)} @@`;
    out += `${head}${funcLine(oldLines, h.oldStart - 1)}\n`;
    out += `${h.lines.join('\n')}\n`;
  }
  return out;
}
