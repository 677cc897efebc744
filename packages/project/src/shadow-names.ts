// The names a shadow repository is laid out by, the same for both engines (the native engine's
// `node/shadow-*.ts` and the object engine's `object-shadow-*.ts`), so either can read what the
// other wrote: where a project's repository lives, its snapshot ref, a turn's refs. Portable (no
// node: import): the object engine's shadow mode runs in the browser too. docs/design.md §7.
import type { ProjectSnapshot } from '@entity-git/core';
import { utf8 } from '@entity-git/git';

/** The ref every snapshot advances: first-parent order is the order they were taken. */
export const SNAPSHOTS_REF = 'refs/heads/snapshots';
/** Default per-file size cap: larger files are left out of snapshots. */
export const DEFAULT_MAX_FILE_BYTES = 5 * 1024 * 1024;
/** Default number of turns whose snapshots a project keeps. */
export const DEFAULT_KEEP_TURNS = 100;
/** A project's mode: shadow snapshots only, or the auto-commit into the user's repository too. */
export type ProjectMode = 'shadow' | 'auto-commit';
export const PROJECT_MODES: readonly ProjectMode[] = ['shadow', 'auto-commit'];

/** A project's shadow settings, kept in its shadow directory's `project.json`. */
export interface ProjectShadowSettings {
  mode: ProjectMode;
  /** Files larger than this are left out of snapshots. */
  maxFileBytes: number;
}

/** The identity of every snapshot commit. */
export const SHADOW_IDENTITY = { name: 'entity-git', email: 'shadow@entity-git.invalid' } as const;

const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

/** The refs of a turn's snapshots: the session id in hex keeps any id a valid ref name. */
export function turnRef(sessionId: string, turn: number, which: 'before' | 'after'): string {
  return `refs/turns/${hex(utf8(sessionId))}/${turn}/${which}`;
}

/** A project's directory name under the shadow root: the first 32 hex digits of the SHA-256 of its workdir's real path. */
export async function shadowDirName(realWorkdir: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', new Uint8Array(utf8(realWorkdir)));
  return hex(new Uint8Array(digest)).slice(0, 32);
}

/** What a shadow-mode project reports before a turn: nothing of the user's blocks anything. */
export function shadowModeSnapshot(workdir: string, isRepository: boolean): ProjectSnapshot {
  return {
    version: 1,
    workdir,
    root: null,
    state: isRepository ? 'repository' : 'not-a-repository',
    head: null,
    takenAt: Date.now(),
    dirty: [],
    agentDirty: [],
  };
}
