import { META_REF, Redactor, type RedactionOptions, scanRepository } from '@entity-git/core';
import { EntityGitError } from '@entity-git/git';
import type { SessionTarget } from './target.js';

/**
 * Scan what a push would send — every commit reachable from the local branches and the meta ref
 * that is not reachable from a ref the host advertised — and refuse with `SECRETS_FOUND` when
 * anything is found (docs/design.md, 'Redaction'). The host is not written to.
 */
export async function refuseSecrets(
  target: SessionTarget,
  branches: ReadonlyMap<string, string>,
  hostHas: readonly string[],
  redaction: RedactionOptions | undefined,
): Promise<void> {
  const { repo, sessionId, conn } = target;
  const meta = await repo.refs.resolve(META_REF).catch(() => null);
  const tips = [...branches.values(), ...(meta === null ? [] : [meta])];
  const findings = await scanRepository(repo, new Redactor(redaction ?? {}), { tips, exclude: hostHas });
  if (findings.length === 0) return;
  const where = findings
    .slice(0, 5)
    .map((f) => `${f.rule} in ${f.file ?? 'the message'} of ${f.commit.slice(0, 12)}, line ${f.line}`)
    .join('; ');
  throw new EntityGitError(
    'SECRETS_FOUND',
    `push of session ${JSON.stringify(sessionId)} (${conn.safeUrl}) refused: ${findings.length} secret${findings.length === 1 ? '' : 's'} in what it would send (${where}${findings.length > 5 ? '; …' : ''}) — run entity-git scan, or push with allowSecrets`,
    { sessionId, url: conn.safeUrl, findings, retryable: false },
  );
}
