// The commit bench's tables: per-turn cost by size and layout against the git CLI and the floor, and
// the repository's size on disk.
import type { SizeResult } from './commit-size.js';
import { int, mb, ms, ratio, align } from './measure.js';

export function table(results: SizeResult[]): string {
  const rows = [
    [
      'layout',
      'messages',
      'entity-git sync',
      'native add+commit',
      'floor',
      'native/entity-git',
      'entity-git/floor',
      'vs own 100',
      'loose turns',
      'loose/pack',
    ],
    [
      '',
      '',
      'median / p90',
      'median / p90',
      'median / p90',
      '(medians)',
      '(medians)',
      '(medians)',
      'median / p90',
      '(medians)',
    ],
    ...results.map((r) => [
      r.layout,
      `${int(r.messagesStart)} → ${int(r.messagesEnd)}`,
      `${ms(r.entityGit.median)} / ${ms(r.entityGit.p90)}`,
      `${ms(r.native.median)} / ${ms(r.native.p90)}`,
      `${ms(r.floor.median)} / ${ms(r.floor.p90)}`,
      ratio(r.ratios.nativeOverEntityGit),
      ratio(r.ratios.entityGitOverFloor),
      ownSmall(results, r),
      `${ms(r.entityGitLoose.median)} / ${ms(r.entityGitLoose.p90)}`,
      ratio(r.entityGitLoose.median / r.entityGit.median),
    ]),
  ];
  return align(rows);
}

/** This size's median over the same layout's median at 100 messages. */
function ownSmall(results: SizeResult[], r: SizeResult): string {
  const small = results.find((x) => x.layout === r.layout && x.messagesStart === 100);
  return small ? ratio(r.entityGit.median / small.entityGit.median) : '';
}

export function diskTable(results: SizeResult[]): string {
  const rows = [
    [
      'layout',
      'messages',
      'message JSON',
      'repo, loose',
      'packed (entity-git)',
      'packed (git repack)',
      'loose/JSON',
      'packed/JSON',
      'pack time js / git',
    ],
    ...results.map((r) => [
      r.layout,
      int(r.messagesEnd),
      mb(r.disk.messageBytes),
      mb(r.disk.loose),
      mb(r.disk.packedJs),
      mb(r.disk.packedNative),
      ratio(r.disk.loose / r.disk.messageBytes),
      `${ratio(r.disk.packedJs / r.disk.messageBytes)} / ${ratio(r.disk.packedNative / r.disk.messageBytes)}`,
      `${(r.disk.packJsMs / 1000).toFixed(2)} s / ${(r.disk.packNativeMs / 1000).toFixed(2)} s`,
    ]),
  ];
  return align(rows);
}
