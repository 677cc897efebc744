// The restore's journal: what a restore is about to write, kept beside the shadow repository
// (0600, temp-then-rename) from before its first file write until its closing snapshot. A restore
// killed half-way is finished by the next call on the project: each planned path still holding
// its version at the restore point gets its restored version; a path that holds anything else was
// changed since by someone else and is left alone. So after a crash the work tree is as it was
// (killed before the journal) or as restored (finished from it).
import { createHash, randomBytes } from 'node:crypto';
import { lstat, readFile, readlink, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RestoreJournal } from '../shadow-restore-rules.js';
import type { ShadowRepository } from './shadow-repository.js';

const journalPath = (repo: ShadowRepository) => join(repo.dir, 'restore-journal.json');

export async function writeJournal(repo: ShadowRepository, journal: RestoreJournal): Promise<void> {
  const temp = `${journalPath(repo)}.${randomBytes(6).toString('hex')}`;
  await writeFile(temp, JSON.stringify(journal), { mode: 0o600 });
  await rename(temp, journalPath(repo));
}

export async function readJournal(repo: ShadowRepository): Promise<RestoreJournal | null> {
  const text = await readFile(journalPath(repo), 'utf8').catch(() => null);
  if (text === null) return null;
  try {
    return JSON.parse(text) as RestoreJournal;
  } catch {
    // A journal is renamed into place whole; one that does not parse was never a restore's.
    return null;
  }
}

export const hasJournal = async (repo: ShadowRepository) => (await lstat(journalPath(repo)).catch(() => null)) !== null;

export const dropJournal = (repo: ShadowRepository) => rm(journalPath(repo), { force: true });

/** The git blob id of what is at `path` in the workdir now (a link's target for a link); null: nothing. */
export async function currentOid(workdir: string, path: string): Promise<string | null> {
  const full = join(workdir, path);
  const info = await lstat(full).catch(() => null);
  if (info === null || info.isDirectory()) return null;
  const bytes = info.isSymbolicLink() ? Buffer.from(await readlink(full), 'utf8') : await readFile(full);
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}
