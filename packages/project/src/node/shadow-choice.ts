// Shadow mode on Node with whichever engine the machine has: native git when a git ≥ 2.29 is on
// PATH (the same rule as the auto-commit's `defaultProjectGitEngine`), else the object engine
// over node:fs. Both lay the repository out the same way under the same root, so a machine that
// gains or loses git keeps its projects' snapshots. docs/design.md §7, "The object engine's shadow mode".
import type { ProjectGit, TurnFilesSource } from '@entity-git/core';
import { nativeGitAvailable, nodeCodec, nodeStorage } from '@entity-git/node-fs';
import { ObjectShadowProjectGit } from '../object-shadow/object-shadow-project-git.js';
import { createObjectEngine } from '../object-engine.js';
import { ShadowProjectGit, type ShadowProjectGitOptions } from './shadow-project-git.js';
import { createNodeProjectGit } from './workdir-coordination.js';

/** Either engine's shadow-mode project git: what {@link createShadowProjectGit} gives. */
export type NodeShadowProjectGit = (ShadowProjectGit | ObjectShadowProjectGit) & ProjectGit & TurnFilesSource;

/** The shadow mode's project git: {@link ShadowProjectGit} on native git, else {@link ObjectShadowProjectGit} over node:fs. */
export function createShadowProjectGit(options: ShadowProjectGitOptions): NodeShadowProjectGit {
  if (nativeGitAvailable(options.gitPath ?? 'git')) return new ShadowProjectGit(options);
  const storage = nodeStorage();
  const engine = createObjectEngine({ storage, codec: nodeCodec });
  const { root, defaultMode, maxFileBytes, keepTurns } = options;
  return new ObjectShadowProjectGit({
    storage,
    codec: nodeCodec,
    root,
    autoCommit: options.autoCommit ?? createNodeProjectGit({ engine }),
    ...(defaultMode ? { defaultMode } : {}),
    ...(maxFileBytes !== undefined ? { maxFileBytes } : {}),
    ...(keepTurns !== undefined ? { keepTurns } : {}),
  });
}
