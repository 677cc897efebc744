import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import type { CommitRecord, RepoState } from '../index.js';
import { parseCommit, parseReflog, type ReflogEntry } from '@entity-git/git';
import type { GitProcess } from './native-git-process.js';

const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** `cat-file --batch` output: `<id> <type> <size>\n<content>\n` for each object asked. */
function batchObjects(out: Buffer): Array<{ id: string; type: string; content: Uint8Array }> {
  const objects: Array<{ id: string; type: string; content: Uint8Array }> = [];
  let at = 0;
  while (at < out.length) {
    const nl = out.indexOf(0x0a, at);
    if (nl < 0) break;
    const [id = '', type = '', size = ''] = out.subarray(at, nl).toString('utf8').split(' ');
    if (type === 'missing' || size === '') {
      at = nl + 1;
      continue;
    }
    const end = nl + 1 + Number(size);
    objects.push({ id, type, content: out.subarray(nl + 1, end) });
    at = end + 1;
  }
  return objects;
}

/** What the undo reads of a repository's history, through git: a first-parent line, a tree diff, remote-tracking refs, a reflog. */
export function nativeHistory({ run, git }: GitProcess) {
  async function history(repo: RepoState, from: string, max: number): Promise<CommitRecord[]> {
    const listed = await run(repo.root, ['rev-list', '--first-parent', `--max-count=${max}`, from, '--']);
    if (listed.code !== 0) return [];
    const ids = listed.stdout.toString('utf8').split('\n').filter(Boolean);
    // rev-list peels a tag to its commit: an id that is not itself a commit names none.
    if (ids[0] !== from) return [];
    const out = await run(repo.root, ['cat-file', '--batch'], { input: `${ids.join('\n')}\n` });
    return batchObjects(out.stdout)
      .filter((o) => o.type === 'commit')
      .map((o) => ({ id: o.id, ...parseCommit(o.content) }));
  }

  async function changedPaths(repo: RepoState, from: string | null, to: string): Promise<string[]> {
    const out = await git(repo.root, [
      'diff-tree',
      '-r',
      '-z',
      '--no-renames',
      '--name-only',
      from ?? EMPTY_TREE,
      to,
      '--',
    ]);
    return out.split('\0').filter(Boolean).sort();
  }

  async function remoteRefsContaining(repo: RepoState, commit: string): Promise<string[]> {
    const out = await git(repo.root, [
      'for-each-ref',
      `--contains=${commit}`,
      '--format=%(refname)%00%(symref)',
      'refs/remotes/',
    ]);
    // A symbolic ref (refs/remotes/origin/HEAD) names a branch listed on its own.
    return out
      .split('\n')
      .map((l) => l.split('\0'))
      .filter(([ref, symref]) => ref !== undefined && ref !== '' && (symref ?? '') === '')
      .map(([ref]) => ref!)
      .sort();
  }

  async function reflog(repo: RepoState, ref: string): Promise<ReflogEntry[]> {
    return parseReflog(await fsp.readFile(join(repo.commonDir, 'logs', ref), 'utf8').catch(() => ''));
  }

  return { history, changedPaths, remoteRefsContaining, reflog };
}
