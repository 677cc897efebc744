import { isEntityGitError, joinPath } from '@entity-git/git';
import { META_REF, REPO_FORMAT } from '../../model/session-meta.js';
import type { Session } from '../../model/types.js';
import type { MirrorContext } from '../context.js';
import { metaCommitId } from '../meta-ref.js';
import type { Difference } from '../mirror.js';
import { configuredFormat } from '../repo/format.js';
import type { Repo } from '../repo/repo.js';

/**
 * verify's checks of what lies beside the branches: the repository's format (`format-old` for a
 * config recording an older format, which sync refuses) and the meta ref (`meta-differs` when it
 * does not show the row as it is now: the next sync moves it).
 */
export async function formatAndMetaDifferences(
  ctx: Pick<MirrorContext, 'store' | 'identity'>,
  repo: Repo,
  session: Session,
): Promise<Difference[]> {
  const differences: Difference[] = [];
  const recorded = configuredFormat(await ctx.store.readText(joinPath(repo.gitdir, 'config')));
  if (recorded !== null && recorded < REPO_FORMAT) {
    differences.push({
      kind: 'format-old',
      detail: `${repo.gitdir} is in format ${recorded}; this entity-git reads and writes format ${REPO_FORMAT} only`,
    });
  }
  const expected = metaCommitId(repo.objects, session, ctx.identity);
  let actual: string | null = null;
  try {
    actual = await repo.refs.resolve(META_REF);
  } catch (err) {
    if (!isEntityGitError(err, 'REF_CORRUPT')) throw err;
  }
  const present = actual === expected && (await repo.objects.has(expected));
  if (!present) {
    differences.push({
      kind: 'meta-differs',
      expected,
      actual,
      detail: `${META_REF} does not show the session row as it is now; the next sync moves it`,
    });
  }
  return differences;
}
