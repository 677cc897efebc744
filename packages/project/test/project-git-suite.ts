import { describe } from 'vitest';
import { committingTests } from './project-git-suite/committing.js';
import { suiteContext, type ProjectGitSuiteOptions } from './project-git-suite/context.js';
import { gitStateTests } from './project-git-suite/git-states.js';
import { layoutTests } from './project-git-suite/layouts.js';
import { revertRefusalTests } from './project-git-suite/revert-refusals.js';
import { revertingTests } from './project-git-suite/reverting.js';
import { userWorkTests } from './project-git-suite/user-work.js';

export type { ProjectGitJudge, ProjectGitSuiteOptions } from './project-git-suite/context.js';

/**
 * The project auto-commit conformance suite (the rules of docs/project-git.md; docs/design.md,
 * 'Safety rules'), the same for every engine: real repositories made and judged by native git.
 */
export function testProjectGit(options: ProjectGitSuiteOptions): void {
  const c = suiteContext(options);
  describe(`project git: ${options.name}`, () => {
    committingTests(c);
    userWorkTests(c);
    gitStateTests(c);
    layoutTests(c);
    revertingTests(c);
    revertRefusalTests(c);
  });
}
