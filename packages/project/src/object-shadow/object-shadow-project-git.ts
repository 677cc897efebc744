// The project's mode, shadow or auto-commit, on the object engine: the same contract as the native
// engine's `ShadowProjectGit` (node/shadow-project-git.ts) — every turn of a session bound to a
// project snapshotted before and after, in both modes, the turn's files listed, diffed and
// restored — over a `Storage`, so it runs in the browser and in Node without git. What both
// engines share is in ../shadow-project-base.ts; this is the object repository's part.
// docs/design.md §7, "Shadow mode" and "The object engine's shadow mode".
import type { ProjectGit, RestoreResult, TurnAt, TurnFiles } from '@entity-git/core';
import { type Codec, joinPath, type LockOptions, type Storage, Store } from '@entity-git/git';

import { ObjectEngine } from '../object-engine.js';
import { normalizeAbsolute } from '../paths.js';
import { createProjectGit } from '../project-git.js';
import { type ProjectMode, turnRef } from '../shadow-names.js';
import { type PruneResult, ShadowModeProjectGit, type TurnSnapshots } from '../shadow-project-base.js';
import { ObjectShadowRepository } from './object-shadow-repository.js';
import { pruneSnapshots } from './prune.js';
import { hasInterruptedRestore, ObjectRestore } from './restore.js';
import { listTurnFiles, turnFileDiff } from './turn-files.js';

export interface ObjectShadowProjectGitOptions {
  /** The storage holding the workdirs and the shadow root (node:fs, or the browser's IndexedDB). */
  storage: Storage;
  /** entity-git's directory for shadow repositories, one per project. */
  root: string;
  /** The auto-commit used for projects in `auto-commit` mode. Default: `createProjectGit` over the object engine on `storage`. */
  autoCommit?: ProjectGit;
  /** The mode of a project never configured. Default `shadow`. */
  defaultMode?: ProjectMode;
  /** The size cap of a project never configured. Default 5 MiB. */
  maxFileBytes?: number;
  /** Keep the newest this many turns' snapshots per project. Default 100. */
  keepTurns?: number;
  /** Hashing and compression. Default: the storage's, else the portable pure-JS codec. */
  codec?: Codec;
  /** The clock of snapshot commits, in ms. Default `Date.now`. */
  now?: () => number;
  /** The shadow repositories' lock files. Default `LOCK_DEFAULTS.ref`. */
  lock?: LockOptions;
}

export class ObjectShadowProjectGit extends ShadowModeProjectGit<ObjectShadowRepository> {
  readonly #options: ObjectShadowProjectGitOptions;
  readonly #store: Store;

  constructor(options: ObjectShadowProjectGitOptions) {
    const { storage, codec } = options;
    super({
      ...options,
      autoCommit:
        options.autoCommit ?? createProjectGit({ engine: new ObjectEngine({ storage, ...(codec ? { codec } : {}) }) }),
    });
    this.#options = options;
    this.#store = new Store(storage);
  }

  protected async readSettings(workdir: string): Promise<string | null> {
    const dir = await ObjectShadowRepository.dirOf(this.#store, this.#options.root, workdir);
    return this.#store.readText(joinPath(dir, 'project.json'));
  }

  protected writeSettings(repo: ObjectShadowRepository, text: string): Promise<void> {
    return this.#store.writeAtomic(joinPath(repo.dir, 'project.json'), text);
  }

  protected open(workdir: string, maxFileBytes: number): Promise<ObjectShadowRepository> {
    const { storage, root, codec, now, lock } = this.#options;
    return ObjectShadowRepository.open({
      storage,
      root,
      workdir,
      maxFileBytes,
      ...(codec ? { codec } : {}),
      ...(now ? { now } : {}),
      ...(lock ? { lock } : {}),
    });
  }

  protected async finishInterruptedRestore(repo: ObjectShadowRepository): Promise<void> {
    if (await hasInterruptedRestore(repo)) await repo.exclusive(() => new ObjectRestore(repo).finishInterrupted());
  }

  protected async isRepository(workdir: string): Promise<boolean> {
    return (await this.#store.lstat(joinPath(normalizeAbsolute(workdir), '.git'))) !== null;
  }

  protected toolPaths(given: string, real: string, paths: readonly string[]): string[] {
    const out = new Set<string>();
    for (const p of paths) {
      const abs = normalizeAbsolute(p.startsWith('/') ? p : `${given}/${p}`);
      for (const base of [normalizeAbsolute(given), real]) {
        if (abs.startsWith(`${base}/`)) {
          out.add(abs.slice(base.length + 1));
          break;
        }
      }
    }
    return [...out].sort();
  }

  protected async setTurnRefs(repo: ObjectShadowRepository, t: TurnSnapshots): Promise<void> {
    await repo.setRef(turnRef(t.sessionId, t.turn, 'before'), t.before);
    await repo.setRef(turnRef(t.sessionId, t.turn, 'after'), t.after);
  }

  protected async turnsHeld(repo: ObjectShadowRepository): Promise<number> {
    return [...(await repo.refsUnder('refs/turns/')).keys()].filter((r) => r.endsWith('/after')).length;
  }

  /** Keeps the newest `keep` turns' snapshots and deletes the loose objects nothing reaches (prune.ts). */
  protected prune(repo: ObjectShadowRepository, keep: number): Promise<PruneResult> {
    return pruneSnapshots(repo, keep);
  }

  protected turnFiles(repo: ObjectShadowRepository, at: TurnAt): Promise<TurnFiles> {
    return listTurnFiles(repo, at.sessionId, at.turn);
  }

  protected fileDiff(repo: ObjectShadowRepository, at: TurnAt & { path: string }): Promise<string> {
    return turnFileDiff(repo, at.sessionId, at.turn, at.path);
  }

  protected restore(
    repo: ObjectShadowRepository,
    at: { sessionId: string; turn: number; paths?: readonly string[] },
  ): Promise<RestoreResult> {
    return new ObjectRestore(repo).turn(at);
  }

  protected undo(repo: ObjectShadowRepository, restored: string): Promise<RestoreResult> {
    return new ObjectRestore(repo).undo(restored);
  }
}
