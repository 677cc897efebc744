// Which directories may become a project's workdir on this machine. The auto-commit and the undo
// write in a workdir and run git there, so a request naming `/etc`, `/`, the home directory itself,
// another user's folder or another project's workdir is refused before anything is stored; and the
// path stored is the real one, so re-pointing a symbolic link later moves nothing.
import { realpath, stat } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { isAbsolute, parse, relative, resolve, sep } from 'node:path';
import { EntityGitError, type Project, type WorkdirPolicy } from '@entity-git/core';

export interface NodeWorkdirPolicyOptions {
  /** When given, a workdir must be one of these directories or inside one (compared resolved). Default: anywhere else allowed. */
  allowedRoots?: readonly string[];
  /** The user whose folders may be workdirs. Default `process.getuid()` (no check where there is none: Windows). */
  uid?: number;
  /** The user's home directory, refused itself (not what is in it). Default `os.homedir()`. */
  home?: string;
}

/** Directories whose whole tree belongs to the system: refused, and anything inside them. */
const SYSTEM_TREES = [
  '/bin',
  '/boot',
  '/dev',
  '/etc',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/proc',
  '/run',
  '/sbin',
  '/sys',
  '/usr',
  '/System',
  '/Library',
  '/private/etc',
  '/private/var',
];
/** Shared directories refused themselves, though a folder of the user's inside them is fine. */
const SHARED_DIRS = [
  '/home',
  '/Users',
  '/root',
  '/tmp',
  '/var',
  '/var/tmp',
  '/opt',
  '/mnt',
  '/media',
  '/srv',
  '/private/tmp',
];

const inside = (dir: string, path: string): boolean => {
  const rel = relative(dir, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
};

const refuse = (workdir: string, reason: string, why: string, data: Record<string, unknown> = {}): never => {
  throw new EntityGitError('INVALID_WORKDIR', `[node-fs] workdir ${JSON.stringify(workdir)} ${why}`, {
    workdir,
    reason,
    ...data,
  });
};

/** Resolved through every link; resolved as text when it does not exist. */
const real = (path: string): Promise<string> => realpath(path).catch(() => resolve(path));

/**
 * The {@link WorkdirPolicy} for Node: the workdir resolved through symbolic links (`realpath`),
 * and refused (`INVALID_WORKDIR`, `data.reason`) when it does not exist or is not a directory
 * (`missing`, `not-directory`), is a file system's root (`file-system-root`), the home directory
 * itself (`home`), a system directory (`system-directory`: `/etc`, `/usr`… and what is inside
 * them; `/tmp`, `/home`… themselves), owned by another user (`not-owned`), or outside
 * `allowedRoots` (`outside-allowed-roots`); `DUPLICATE_PROJECT` when a project has that workdir.
 */
export function nodeWorkdirPolicy(options: NodeWorkdirPolicyOptions = {}): WorkdirPolicy {
  const uid = options.uid ?? process.getuid?.();
  return async (workdir: string, projects: readonly Project[]): Promise<string> => {
    const path = await realpath(workdir).catch((err: NodeJS.ErrnoException) =>
      refuse(workdir, 'missing', `does not exist (${err.code ?? err.message})`),
    );
    const st = await stat(path);
    if (!st.isDirectory()) refuse(workdir, 'not-directory', 'is not a directory');
    if (parse(path).root === path) refuse(workdir, 'file-system-root', "is the file system's root");
    if (path === (await real(options.home ?? homedir())))
      refuse(workdir, 'home', 'is the home directory itself: choose a project folder in it');
    const shared = [...SHARED_DIRS, tmpdir()];
    if (SYSTEM_TREES.some((d) => inside(d, path)) || (await Promise.all(shared.map(real))).includes(path))
      refuse(workdir, 'system-directory', 'is a system or shared directory', { resolved: path });
    if (uid !== undefined && st.uid !== uid)
      refuse(workdir, 'not-owned', `belongs to another user (uid ${st.uid})`, { resolved: path, owner: st.uid });
    if (options.allowedRoots !== undefined) {
      const roots = await Promise.all(options.allowedRoots.map(real));
      if (!roots.some((r) => inside(r, path)))
        refuse(workdir, 'outside-allowed-roots', `is outside the allowed roots (${roots.join(', ')})`, {
          resolved: path,
        });
    }
    const other = projects.find((p) => p.workdir === path);
    if (other !== undefined)
      throw new EntityGitError(
        'DUPLICATE_PROJECT',
        `[node-fs] ${JSON.stringify(path)} is already the workdir of project ${JSON.stringify(other.name)}`,
        { workdir: path, projectId: other.id, reason: 'workdir' },
      );
    return path;
  };
}
