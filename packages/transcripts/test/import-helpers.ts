import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createNodeMirror } from '@entity-git/node-fs';
import { type TranscriptFormat, TranscriptDag } from '../src/index.js';
import { type ImportOptions, importTranscripts, TranscriptFile } from '../src/node/index.js';
import { git, tempRoot } from './git-helpers.js';

/** A transcript file of its own directory, named for its session. */
export function writeTranscript(name: string, content: string | Uint8Array): string {
  const path = join(tempRoot('eg-transcript-file-'), name);
  writeFileSync(path, content);
  return path;
}

/**
 * An importer of one file into `root`, as `entity-git import` makes one: its own DAG, mirror and
 * reader. `run` imports what the file holds now; a new importer over the same root is what a
 * second run of the command (another process) is.
 */
export function importer(
  path: string,
  format: TranscriptFormat,
  root = tempRoot(),
  options: Partial<ImportOptions> = {},
) {
  const dag = new TranscriptDag();
  const mirror = createNodeMirror({ dag, root });
  const file = new TranscriptFile(path, format);
  return {
    root,
    repo: (id: string) => mirror.repoPath(id),
    run: (more: Partial<ImportOptions> = {}) => importTranscripts({ files: [file], dag, mirror, ...options, ...more }),
  };
}

/** Imports the file once into a fresh root; returns that importer after the run, and the report. */
export async function importOnce(path: string, format: TranscriptFormat, options: Partial<ImportOptions> = {}) {
  const i = importer(path, format, tempRoot(), options);
  return { ...i, report: await i.run() };
}

/** The subjects of a branch's commits, oldest first. */
export const subjects = (repo: string, branch: string): string[] =>
  git(repo, 'log', '--reverse', '--format=%s', branch).trim().split('\n');

/** The message files each commit of a branch holds, oldest commit first. */
export function filesByCommit(repo: string, branch: string): string[][] {
  return git(repo, 'rev-list', '--reverse', branch)
    .trim()
    .split('\n')
    .map((c) => git(repo, 'ls-tree', '-r', '--name-only', c).trim().split('\n'));
}

/** `messages/<seq>-<role>-<id>.json` of a node, as the mirror names it (flat layout). */
export const messageFile = (seq: number, role: string, id: string): string =>
  `messages/${String(seq).padStart(6, '0')}-${role[0]}-${id}.json`;

/** The commit ids a branch's reflog went through, newest first. */
export const reflog = (repo: string, branch: string): string[] =>
  git(repo, 'reflog', '--format=%H', branch).trim().split('\n');
