// A restore that never loses work, on native git: the rules and steps both engines share are in
// ../shadow-restore-rules.ts; here is what native git reads and node:fs writes. It writes only the
// paths it restores, each through a temporary file renamed into place, and never touches a branch
// of the user's. docs/design.md §7, "Shadow mode".
import { chmod, lstat, mkdir, realpath, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join, sep } from 'node:path';
import type { TurnFiles } from '@entity-git/core';
import { parseSnapshotMessage } from '../shadow-message.js';
import { type RestoreJournal, ShadowRestore, type Version } from '../shadow-restore-rules.js';
import { currentOid, dropJournal, readJournal, writeJournal } from './shadow-restore-journal.js';
import type { ShadowRepository } from './shadow-repository.js';
import { listTurnFiles } from './shadow-turn-files.js';

const tempOf = (target: string) => join(dirname(target), `.${basename(target)}.entity-git-restore`);

/** One project's restores on native git. */
export class NativeRestore extends ShadowRestore<ShadowRepository> {
  protected turnFiles(sessionId: string, turn: number): Promise<TurnFiles> {
    return listTurnFiles(this.repo, sessionId, turn);
  }

  protected async messageOf(commit: string): Promise<string> {
    const text = await this.repo.git.git(['cat-file', 'commit', commit]);
    return text.slice(text.indexOf('\n\n') + 2);
  }

  protected async changedOutsideTurns(
    since: string,
    newest: string | null,
    paths: readonly string[],
  ): Promise<Set<string>> {
    const repo = this.repo;
    const out = new Set<string>();
    if (newest === null || newest === since || paths.length === 0) return out;
    const ancestor = await repo.git.run(['merge-base', '--is-ancestor', since, newest]);
    if (ancestor.code !== 0) {
      const [then, last] = await Promise.all([repo.blobs(since, paths), repo.blobs(newest, paths)]);
      for (const p of paths) if (then.get(p)?.oid !== last.get(p)?.oid) out.add(p);
      return out;
    }
    const log = await repo.git.git([
      'log',
      '--first-parent',
      '--no-renames',
      '-z',
      '--name-only',
      '--format=%x01%H%x01%B',
      `${since}..${newest}`,
      '--',
      ...paths,
    ]);
    const parts = log.split('\x01');
    for (let i = 1; i + 1 < parts.length; i += 2) {
      const rest = parts[i + 1] as string;
      const end = rest.indexOf('\0\n');
      const kind = parseSnapshotMessage(rest.slice(0, end))?.kind;
      if (kind === 'after') continue;
      for (const name of rest.slice(end + 2).split('\0')) if (name) out.add(name);
    }
    return out;
  }

  protected async insideWorkdir(path: string): Promise<boolean> {
    const workdir = this.repo.workdir;
    let dir = dirname(join(workdir, path));
    // The nearest existing ancestor decides: missing directories are created below it.
    for (;;) {
      const real = await realpath(dir).catch(() => null);
      if (real !== null) return real === workdir || real.startsWith(workdir + sep);
      const up = dirname(dir);
      if (up === dir) return false;
      dir = up;
    }
  }

  protected writeJournal(journal: RestoreJournal): Promise<void> {
    return writeJournal(this.repo, journal);
  }

  protected readJournal(): Promise<RestoreJournal | null> {
    return readJournal(this.repo);
  }

  protected dropJournal(): Promise<void> {
    return dropJournal(this.repo);
  }

  protected async removeTemporary(path: string): Promise<void> {
    await rm(tempOf(join(this.repo.workdir, path)), { force: true });
  }

  protected currentOid(path: string): Promise<string | null> {
    return currentOid(this.repo.workdir, path);
  }

  protected async writeVersion(path: string, entry: Version | null): Promise<void> {
    const repo = this.repo;
    const target = join(repo.workdir, path);
    if (entry === null) {
      const info = await lstat(target).catch(() => null);
      if (info !== null && !info.isDirectory()) await rm(target);
      return;
    }
    const bytes = await repo.blob(entry.oid);
    await mkdir(dirname(target), { recursive: true });
    // A fixed name beside the file, so a restore finished after a crash removes what one left.
    const temp = tempOf(target);
    await rm(temp, { force: true });
    try {
      if (entry.mode === '120000') await symlink(bytes.toString('utf8'), temp);
      else {
        await writeFile(temp, bytes, { mode: entry.mode === '100755' ? 0o755 : 0o644 });
        await chmod(temp, entry.mode === '100755' ? 0o755 : 0o644);
      }
      const existing = await lstat(target).catch(() => null);
      if (existing?.isDirectory()) await rm(target, { recursive: false }).catch(() => undefined);
      await rename(temp, target);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
  }
}
