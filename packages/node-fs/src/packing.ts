import { createPacker, EntityGitError, packSession, type Packer, type PackerOptions } from '@entity-git/core';
import { storeFor, type PackReport } from '@entity-git/git';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { nativeGitAvailable } from './native-git-available.js';
import { nodeStorage } from './node-storage.js';

export interface NativeRepackOptions {
  /** The git binary. Default `git` on PATH. */
  gitPath?: string;
  /** From this many packs on, small packs are merged too (`git repack -d --geometric=2`). Default 16. */
  maxPacks?: number;
}

const packs = (gitdir: string): string[] => {
  try {
    return readdirSync(join(gitdir, 'objects', 'pack'))
      .filter((n) => n.endsWith('.pack'))
      .sort();
  } catch {
    return [];
  }
};

const looseCount = (gitdir: string): number => {
  let n = 0;
  for (let i = 0; i < 256; i++) {
    try {
      n += readdirSync(join(gitdir, 'objects', i.toString(16).padStart(2, '0'))).filter((f) => f.length === 38).length;
    } catch {
      // no such fan-out directory yet
    }
  }
  return n;
};

/** Objects in a pack: the last fan-out entry of its version-2 index. */
const packObjects = (pack: string): number => {
  try {
    const idx = readFileSync(pack.replace(/\.pack$/, '.idx'));
    return idx.readUInt32BE(8 + 255 * 4);
  } catch {
    return 0;
  }
};

/**
 * Pack with native git: `git repack -d` (the loose objects into a new pack, deltas computed by
 * git, the loose copies then removed), and `git repack -d --geometric=2` once there are
 * `maxPacks` packs: the small packs (a mirror's turn packs) and the loose objects merged into one,
 * each pack left at least twice the size of all smaller ones together. A geometric repack takes
 * every object of the packs it merges, reachable or not, so the pack of a sync that has not yet
 * moved its ref loses nothing. Like git's own background maintenance, it runs beside writers:
 * objects written meanwhile stay where they are. No hook runs, no reflog is expired, nothing
 * unreachable is pruned.
 */
export function nativeRepack(options: NativeRepackOptions = {}): (gitdir: string) => Promise<PackReport> {
  const gitPath = options.gitPath ?? 'git';
  const maxPacks = options.maxPacks ?? 16;
  return async (gitdir) => {
    const before = new Set(packs(gitdir));
    const looseBefore = looseCount(gitdir);
    const git = (args: string[]) =>
      new Promise<void>((resolve, reject) => {
        execFile(
          gitPath,
          args,
          {
            cwd: gitdir,
            env: { ...process.env, GIT_DIR: gitdir, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' },
            windowsHide: true,
            maxBuffer: 1 << 24,
          },
          (err, _out, stderr) => {
            if (err)
              reject(
                new EntityGitError(
                  'STORAGE_ERROR',
                  `git ${args[0]} in ${gitdir} failed: ${String(stderr).trim() || err.message}`,
                  { gitdir },
                  { cause: err },
                ),
              );
            else resolve();
          },
        );
      });
    await git(['repack', ...(before.size >= maxPacks ? ['--geometric=2'] : []), '-d', '-q', '--no-write-bitmap-index']);
    // The commit-graph too (git gc writes one; repack does not): native git's log and
    // reachability use it, and so does the mirror's replay to place a commit on its branch.
    await git(['commit-graph', 'write', '--reachable', '--no-progress']);
    const made = packs(gitdir).filter((p) => !before.has(p));
    const pack = made.length > 0 ? join(gitdir, 'objects', 'pack', made.at(-1)!) : null;
    const after = new Set(packs(gitdir));
    return {
      pack,
      objects: pack ? packObjects(pack) : 0,
      deltas: null,
      looseRemoved: Math.max(0, looseBefore - looseCount(gitdir)),
      bytes: pack ? statSync(pack).size : 0,
      packsRemoved: [...before].filter((p) => !after.has(p)).length,
    };
  };
}

export interface NodePackerOptions extends Omit<PackerOptions, 'storage' | 'pack'> {
  /** `native`: git repack (the default when git is found); `js`: entity-git's own packer. */
  engine?: 'native' | 'js';
  repack?: NativeRepackOptions;
}

/**
 * The background packer for session repositories on Node: native `git repack` when git is on
 * PATH, else entity-git's own packer (`packSession`, trees as deltas of their previous turn).
 * Give it to `createMirrorService({ packer })`.
 */
export function createNodePacker(options: NodePackerOptions = {}): Packer {
  const { engine, repack, ...rest } = options;
  const storage = nodeStorage();
  const useNative = engine === 'native' || (engine === undefined && nativeGitAvailable(repack?.gitPath));
  const store = storeFor(storage);
  return createPacker({
    ...rest,
    storage,
    pack: useNative ? nativeRepack(repack) : (gitdir) => packSession(store, gitdir),
  });
}
