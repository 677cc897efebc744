// What the backfill bench reports of a layout: its result's shape, the disk its repositories take,
// and the two tables it prints.
import { join } from 'node:path';
import type { Layout } from '../../packages/core/src/index.js';
import { align, bytesUnder, int, mb, ratio, type Stats } from './measure.js';

export interface Disk {
  objects: number;
  gitdir: number;
  worktree: number;
}
export const diskOf = (repo: string): Disk => {
  const gitdir = bytesUnder(join(repo, '.git'));
  return { objects: bytesUnder(join(repo, '.git', 'objects')), gitdir, worktree: bytesUnder(repo) - gitdir };
};

export interface LayoutResult {
  layout: Layout;
  messages: number;
  commits: number;
  messageBytes: number;
  streamBytes: number;
  streamBuildMs: number;
  entityGit: Stats;
  sameThread: Stats;
  fastImport: Stats;
  checkout: Stats;
  reconcile: Stats;
  /** Reads of the session's nodes (`nodesAfter` calls) in one reconcile. */
  reconcileReads: number;
  ratios: {
    entityGitOverFastImport: number;
    entityGitOverFastImportAndCheckout: number;
    sameThreadOverEntityGit: number;
    reconcileOverEntityGit: number;
  };
  disk: { entityGit: Disk; fastImport: Disk };
  finalTree: string;
  tip: string;
}

export const sec = (x: number) => `${(x / 1000).toFixed(2)} s`;

export function table(results: LayoutResult[]): string {
  return align([
    [
      'layout',
      'messages',
      'entity-git sync',
      'fast-import',
      '+ checkout',
      'entity-git/fast-import',
      'entity-git/(fast-import+checkout)',
      'same-thread tree',
      'same-thread/entity-git',
      'reconcile',
      'reconcile/entity-git',
      'node reads',
    ],
    [
      '',
      '',
      'median / max',
      'median / max',
      'median',
      '(medians)',
      '(medians)',
      'median',
      '(medians)',
      'median / max',
      '(medians)',
      'a reconcile',
    ],
    ...results.map((r) => [
      r.layout,
      `${int(r.messages)} (${int(r.commits)} commits)`,
      `${sec(r.entityGit.median)} / ${sec(r.entityGit.max)}`,
      `${sec(r.fastImport.median)} / ${sec(r.fastImport.max)}`,
      sec(r.checkout.median),
      ratio(r.ratios.entityGitOverFastImport),
      ratio(r.ratios.entityGitOverFastImportAndCheckout),
      sec(r.sameThread.median),
      ratio(r.ratios.sameThreadOverEntityGit),
      `${sec(r.reconcile.median)} / ${sec(r.reconcile.max)}`,
      ratio(r.ratios.reconcileOverEntityGit),
      String(r.reconcileReads),
    ]),
  ]);
}

export function diskTable(results: LayoutResult[]): string {
  return align([
    [
      'layout',
      'message JSON',
      'entity-git objects',
      'fast-import objects',
      'entity-git .git',
      'fast-import .git',
      'objects/JSON (entity-git / fast-import)',
    ],
    ...results.map((r) => [
      r.layout,
      mb(r.messageBytes),
      mb(r.disk.entityGit.objects),
      mb(r.disk.fastImport.objects),
      mb(r.disk.entityGit.gitdir),
      mb(r.disk.fastImport.gitdir),
      `${ratio(r.disk.entityGit.objects / r.messageBytes)} / ${ratio(r.disk.fastImport.objects / r.messageBytes)}`,
    ]),
  ]);
}
