// A restore that never loses work, on the object engine: the rules and steps both engines share
// are in ../shadow-restore-rules.ts (the same as native git's, node/shadow-restore.ts); here is
// what the object store reads and the `Storage` writes, so it runs in the browser too. Each path
// is written through a temporary file renamed into place; the journal lies beside the repository.
// docs/design.md §7, "Shadow mode".
import type { TurnFiles } from '@entity-git/core';
import { dirname, fromUtf8, joinPath, type Store } from '@entity-git/git';
import { parseSnapshotMessage } from '../shadow-message.js';
import { type RestoreJournal, ShadowRestore, type Version } from '../shadow-restore-rules.js';
import type { ObjectShadowRepository } from './object-shadow-repository.js';
import { listTurnFiles, snapshotChanges } from './turn-files.js';

const journalPath = (repo: ObjectShadowRepository) => joinPath(repo.dir, 'restore-journal.json');
const tempOf = (target: string) =>
  joinPath(dirname(target), `.${target.slice(target.lastIndexOf('/') + 1)}.entity-git-restore`);

export async function hasInterruptedRestore(repo: ObjectShadowRepository): Promise<boolean> {
  return (await repo.store.lstat(journalPath(repo))) !== null;
}

/** One project's restores on the object engine. */
export class ObjectRestore extends ShadowRestore<ObjectShadowRepository> {
  protected turnFiles(sessionId: string, turn: number): Promise<TurnFiles> {
    return listTurnFiles(this.repo, sessionId, turn);
  }

  protected async messageOf(commit: string): Promise<string> {
    return (await this.repo.commit(commit)).message;
  }

  /** Walks the newest snapshot's first-parent line back to `since`; a line that misses it (pruned, or forked by another session's turn) compares the two snapshots instead. */
  protected async changedOutsideTurns(
    since: string,
    newest: string | null,
    paths: readonly string[],
  ): Promise<Set<string>> {
    const repo = this.repo;
    const out = new Set<string>();
    if (newest === null || newest === since || paths.length === 0) return out;
    const wanted = new Set(paths);
    const line: string[] = [];
    let c: string | undefined = newest;
    while (c !== undefined && c !== since) {
      line.push(c);
      // A commit below a pruned history's boundary is gone: the line ends there.
      c = (await repo.commit(c).catch(() => null))?.parents[0];
    }
    if (c !== since) {
      const [then, last] = await Promise.all([repo.blobs(since, paths), repo.blobs(newest, paths)]);
      for (const p of paths) if (then.get(p)?.oid !== last.get(p)?.oid) out.add(p);
      return out;
    }
    for (const id of line) {
      const commit = await repo.commit(id);
      if (parseSnapshotMessage(commit.message)?.kind === 'after' || commit.parents[0] === undefined) continue;
      for (const change of await snapshotChanges(repo, commit.parents[0], id))
        if (wanted.has(change.path)) out.add(change.path);
    }
    return out;
  }

  /** Whether no link on the way to the path's parent directory leads out of the workdir. */
  protected async insideWorkdir(path: string): Promise<boolean> {
    const repo = this.repo;
    const { store, workdir } = repo;
    let at = workdir;
    const parts = path.split('/').slice(0, -1);
    for (const part of parts) {
      at = joinPath(at, part);
      const st = await store.lstat(at);
      if (st === null) return true;
      if (st.isSymbolicLink()) return false;
    }
    return true;
  }

  protected writeJournal(journal: RestoreJournal): Promise<void> {
    return this.repo.store.writeAtomic(journalPath(this.repo), JSON.stringify(journal));
  }

  protected async readJournal(): Promise<RestoreJournal | null> {
    const text = await this.repo.store.readText(journalPath(this.repo));
    if (text === null) return null;
    try {
      return JSON.parse(text) as RestoreJournal;
    } catch {
      // A journal is renamed into place whole; one that does not parse was never a restore's.
      await this.dropJournal();
      return null;
    }
  }

  protected async dropJournal(): Promise<void> {
    await this.repo.store.remove(journalPath(this.repo));
  }

  protected async removeTemporary(path: string): Promise<void> {
    await this.repo.store.remove(tempOf(joinPath(this.repo.workdir, path)));
  }

  protected async currentOid(path: string): Promise<string | null> {
    const repo = this.repo;
    const { store } = repo;
    const full = joinPath(repo.workdir, path);
    const st = await store.lstat(full);
    if (st === null || st.isDirectory()) return null;
    const bytes =
      st.isSymbolicLink() && store.fs.readlink
        ? new TextEncoder().encode(await store.fs.readlink(full))
        : await store.read(full);
    return bytes === null ? null : repo.objects.hash('blob', bytes);
  }

  protected async writeVersion(path: string, entry: Version | null): Promise<void> {
    const repo = this.repo;
    const store: Store = repo.store;
    const target = joinPath(repo.workdir, path);
    if (entry === null) {
      const st = await store.lstat(target);
      if (st !== null && !st.isDirectory()) await store.remove(target);
      return;
    }
    const bytes = await repo.blob(entry.oid);
    await store.mkdirp(dirname(target));
    // A fixed name beside the file, so a restore finished after a crash removes what one left.
    const temp = tempOf(target);
    await store.remove(temp);
    try {
      if (entry.mode === '120000') await store.fs.symlink!(fromUtf8(bytes), temp);
      else await store.fs.writeFile(temp, bytes, { mode: entry.mode === '100755' ? 0o755 : 0o644 });
      if ((await store.lstat(target))?.isDirectory()) await store.removeEmptyDir(target);
      await store.fs.rename(temp, target);
    } catch (err) {
      await store.remove(temp);
      throw err;
    }
  }
}
