import { loadIsoGit } from '@entity-git/git';
import type { SessionTarget } from './target.js';
import { transportError } from './transport-error.js';

/** The refs the host advertises for the target's repository, by name (`getRemoteInfo2`, protocol v1). */
export async function advertisedRefs(t: SessionTarget, op: 'push' | 'fetch'): Promise<Map<string, string>> {
  try {
    const { getRemoteInfo2 } = await loadIsoGit();
    const info = await getRemoteInfo2({
      ...t.conn.args(),
      ...(op === 'push' ? { forPush: true } : {}),
      protocolVersion: 1,
    });
    return new Map((info.refs ?? []).map((r) => [r.ref, r.oid]));
  } catch (err) {
    throw transportError(err, op, t.url, t.sessionId);
  }
}
