import { MemoryDag, type DagNode, type Mirror } from '@entity-git/core';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, lstatSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Run native git in `cwd`; returns stdout (throws with stderr on a non-zero exit). */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    maxBuffer: 1 << 28,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd },
  });
}

export function gitBytes(cwd: string, ...args: string[]): Buffer {
  return execFileSync('git', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
}

export function tempDir(prefix = 'eg-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Every path under `dir`, relative, recursively (directories end in '/'). */
export function listTree(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (lstatSync(full).isDirectory()) out.push(`${prefix}${name}/`, ...listTree(full, `${prefix}${name}/`));
    else out.push(prefix + name);
  }
  return out;
}

const mounts: string[] = [];

/** A small tmpfs of our own (needs root, as in CI); null where mounting is not allowed. */
export function tmpfs(size: string): string | null {
  const dir = join(tempDir('eg-mnt-'), 'fs');
  mkdirSync(dir);
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
  if (r.status !== 0) return null;
  mounts.push(dir);
  return dir;
}

export const remount = (dir: string, opts: string) => execFileSync('mount', ['-o', `remount,${opts}`, dir]);

/** Unmount every tmpfs this test file mounted (its `afterAll`). */
export function unmountAll(): void {
  for (const m of mounts.splice(0)) spawnSync('umount', ['-l', m]);
}

/** Whether this machine lets the tests mount a tmpfs (a probe mount). */
export const canMount = (): boolean => tmpfs('64k') !== null;

/** Incompressible printable text of `length` characters, the same every run. */
export function noise(length: number): string {
  // A 32-bit LCG in integer arithmetic, its high bits taken (the low ones of an LCG repeat soon).
  let x = 12345;
  return Array.from({ length }, () =>
    String.fromCharCode(33 + (((x = (Math.imul(x, 1103515245) + 12345) >>> 0) >>> 16) % 90)),
  ).join('');
}

/**
 * A session `s` in a MemoryDag that grows by turns of four nodes (a user message, a tool call,
 * its result, the reply); node ids are `idOf(seq)`, `n<seq>` unless given.
 */
export function growingSession(
  title: string,
  idOf: (seq: number) => string = (seq) => `n${seq}`,
): { dag: MemoryDag; turns(k: number): Promise<void> } {
  const dag = new MemoryDag();
  let seq = 0;
  let prev: string | null = null;
  return {
    dag,
    async turns(k) {
      if (seq === 0) await dag.createSession({ id: 's', title, created_at: 1779500000 });
      for (let t = 0; t < k; t++) {
        for (const role of ['user', 'assistant', 'tool', 'assistant'] as const) {
          seq++;
          const n: DagNode = {
            id: idOf(seq),
            session_id: 's',
            seq,
            role,
            content: `${role} ${seq}`,
            predecessor: prev,
            caller: role === 'tool' ? prev : null,
            created_at: 1779500000 + seq,
            metadata: role === 'tool' ? { tool: 'read' } : null,
          };
          await dag.addNode(n);
          prev = n.id;
        }
      }
    },
  };
}

/** A user's project: a git repository whose one commit, by `User`, holds `file`. */
export function userRepo(file = 'README.md', content = '# user project\n'): string {
  const workdir = tempDir('eg-proj-');
  git(workdir, 'init', '-q', '-b', 'main');
  writeFileSync(join(workdir, file), content);
  git(workdir, 'add', file);
  git(
    workdir,
    '-c',
    'user.name=User',
    '-c',
    'user.email=user@example.com',
    '-c',
    'commit.gpgsign=false',
    'commit',
    '-q',
    '-m',
    'initial',
  );
  return workdir;
}

/** `inner` with some of its methods replaced (the others call through). */
export function patched(inner: Mirror, over: Partial<Mirror>): Mirror {
  return {
    sync: (id, o) => inner.sync(id, o),
    log: (id, o) => inner.log(id, o),
    branches: (id) => inner.branches(id),
    read: (id, c, o) => inner.read(id, c, o),
    verify: (id) => inner.verify(id),
    repoPath: (id) => inner.repoPath(id),
    ...over,
  };
}
