import type { Project } from '../model/types.js';

/**
 * Decides whether a directory may become a project's workdir, before `create_project` stores it.
 * Given the absolute path the request named and the projects that exist, it resolves the path
 * (symbolic links included: a link re-pointed later must not move the project) and returns the
 * path to store, or throws an `EntityGitError` (`INVALID_WORKDIR` with `data.reason`,
 * `DUPLICATE_PROJECT` for another project's workdir). Node's is node-fs's `nodeWorkdirPolicy`.
 * Default (none given): the project store's own check alone (an existing directory).
 */
export type WorkdirPolicy = (workdir: string, projects: readonly Project[]) => Promise<string>;
