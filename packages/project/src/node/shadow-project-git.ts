// The project's mode, shadow or auto-commit, around the project auto-commit, on native git: every
// turn of a session bound to a project is snapshotted in the project's shadow repository, before
// and after, in both modes; in auto-commit mode the agent's edits are also committed into the
// user's own repository as before. What both engines share is in ../shadow-project-base.ts; this
// is the native repository's part. docs/design.md §7, "Shadow mode"; the default is argued there.
import { readFile, stat, writeFile } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import type { ProjectGit, RestoreResult, TurnAt, TurnFiles } from '@entity-git/core';
import type { ProjectMode } from '../shadow-names.js';
import { type PruneResult, ShadowModeProjectGit, type TurnSnapshots } from '../shadow-project-base.js';
import { packLooseObjects, pruneSnapshots } from './shadow-prune.js';
import { ShadowRepository, shadowDirOf } from './shadow-repository.js';
import { NativeRestore } from './shadow-restore.js';
import { hasJournal } from './shadow-restore-journal.js';
import { listTurnFiles, turnFileDiff, turnRef } from './shadow-turn-files.js';
import { createNodeProjectGit } from './workdir-coordination.js';

export { PROJECT_MODES, type ProjectMode, type ProjectShadowSettings } from '../shadow-names.js';

export interface ShadowProjectGitOptions {
  /** entity-git's directory for shadow repositories, one per project (created 0700). */
  root: string;
  /** The auto-commit used for projects in `auto-commit` mode. Default `createNodeProjectGit()`. */
  autoCommit?: ProjectGit;
  /** The mode of a project never configured. Default `shadow`. */
  defaultMode?: ProjectMode;
  /** The size cap of a project never configured. Default 5 MiB. */
  maxFileBytes?: number;
  /** The git binary. Default `git`. */
  gitPath?: string;
  /** Keep the newest this many turns' snapshots per project; older ones are pruned and the repository repacked. Default 100. */
  keepTurns?: number;
  /** Watch each project's work tree so snapshots look only at what changed (`ShadowRepositoryOptions.watch`). Default true. */
  watch?: boolean;
}

export class ShadowProjectGit extends ShadowModeProjectGit<ShadowRepository> {
  readonly #options: ShadowProjectGitOptions;

  constructor(options: ShadowProjectGitOptions) {
    super({ ...options, autoCommit: options.autoCommit ?? createNodeProjectGit() });
    this.#options = options;
  }

  protected async readSettings(workdir: string): Promise<string | null> {
    const dir = await shadowDirOf(this.#options.root, workdir).catch(() => null);
    return dir === null ? null : readFile(join(dir, 'project.json'), 'utf8').catch(() => null);
  }

  protected writeSettings(repo: ShadowRepository, text: string): Promise<void> {
    return writeFile(join(repo.dir, 'project.json'), text, { mode: 0o600 });
  }

  protected open(workdir: string, maxFileBytes: number): Promise<ShadowRepository> {
    return ShadowRepository.open({
      root: this.#options.root,
      workdir,
      maxFileBytes,
      ...(this.#options.gitPath ? { gitPath: this.#options.gitPath } : {}),
      ...(this.#options.watch === false ? { watch: false } : {}),
    });
  }

  protected async finishInterruptedRestore(repo: ShadowRepository): Promise<void> {
    if (await hasJournal(repo)) await repo.exclusive(() => new NativeRestore(repo).finishInterrupted());
  }

  protected async isRepository(workdir: string): Promise<boolean> {
    return (await stat(join(workdir, '.git')).catch(() => null)) !== null;
  }

  protected toolPaths(given: string, real: string, paths: readonly string[]): string[] {
    const out = new Set<string>();
    for (const p of paths) {
      const abs = isAbsolute(p) ? p : join(given, p);
      for (const base of [given, real]) {
        const rel = relative(base, abs);
        if (rel && !rel.startsWith('..') && !isAbsolute(rel)) {
          out.add(rel.split(sep).join('/'));
          break;
        }
      }
    }
    return [...out].sort();
  }

  protected setTurnRefs(repo: ShadowRepository, t: TurnSnapshots): Promise<void> {
    return repo.setRefs([
      [turnRef(t.sessionId, t.turn, 'before'), t.before],
      [turnRef(t.sessionId, t.turn, 'after'), t.after],
    ]);
  }

  protected async turnsHeld(repo: ShadowRepository): Promise<number> {
    return [...(await repo.refsUnder('refs/turns/')).keys()].filter((r) => r.endsWith('/after')).length;
  }

  /** Keeps the newest `keep` turns' snapshots and repacks (shadow-prune.ts). */
  protected prune(repo: ShadowRepository, keep: number): Promise<PruneResult> {
    return pruneSnapshots(repo, keep);
  }

  /** Packs the loose objects once they are many (shadow-prune.ts). */
  protected override async compact(repo: ShadowRepository): Promise<void> {
    await packLooseObjects(repo);
  }

  protected turnFiles(repo: ShadowRepository, at: TurnAt): Promise<TurnFiles> {
    return listTurnFiles(repo, at.sessionId, at.turn);
  }

  protected fileDiff(repo: ShadowRepository, at: TurnAt & { path: string }): Promise<string> {
    return turnFileDiff(repo, at.sessionId, at.turn, at.path);
  }

  protected restore(
    repo: ShadowRepository,
    at: { sessionId: string; turn: number; paths?: readonly string[] },
  ): Promise<RestoreResult> {
    return new NativeRestore(repo).turn(at);
  }

  protected undo(repo: ShadowRepository, restored: string): Promise<RestoreResult> {
    return new NativeRestore(repo).undo(restored);
  }
}
