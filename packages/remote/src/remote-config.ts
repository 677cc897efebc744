import { joinPath, type Store } from '@entity-git/git';
import type { Repo } from '@entity-git/core/repository';
import { redactUrl, type Remote } from './remote.js';

/**
 * Make sure the repository's config names the remote (isomorphic-git's fetch maps refs through
 * `remote.<name>.fetch`, and a person can then `git fetch` by hand): the URL without
 * credentials, branches to `refs/remotes/<name>/*`, the HEAD record beside them. Written
 * through a temp file and a rename, and only when it differs.
 */
export async function ensureRemoteConfig(store: Store, repo: Repo, remote: Remote, url: string): Promise<void> {
  const path = joinPath(repo.gitdir, 'config');
  const text = (await store.readText(path)) ?? '';
  const n = remote.name;
  const section = `${[
    `[remote "${n}"]`,
    `\turl = ${redactUrl(url)}`,
    `\tfetch = +refs/heads/*:refs/remotes/${n}/*`,
    // isomorphic-git's push keeps its copy of any pushed ref at refs/remotes/<name>/<ref>;
    // fetching to the same place keeps one remote-tracking copy of the record.
    `\tfetch = +refs/entity-git/*:refs/remotes/${n}/refs/entity-git/*`,
  ].join('\n')}\n`;
  const lines = text.split('\n');
  const out: string[] = [];
  let skipping = false;
  for (const line of lines) {
    if (/^\s*\[/.test(line)) skipping = line.trim() === `[remote "${n}"]`;
    if (!skipping) out.push(line);
  }
  let rest = out.join('\n');
  if (rest !== '' && !rest.endsWith('\n')) rest += '\n';
  const next = rest + section;
  if (next !== text) await store.writeAtomic(path, next);
}
