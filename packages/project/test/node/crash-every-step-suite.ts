// The project auto-commit killed (SIGKILL, in a child process) right after its k-th step, for
// every k of a turn, on both engines; then the turn's afterTurn run again in a fresh process.
// A step: one git process spawned (native engine, counted by a wrapper given as `gitPath`), or one
// write through the engine's storage (isomorphic-git engine, a wrapped `storage`). See
// crash-step-child.ts. Each engine runs in a file of its own (crash-every-step-native.test.ts,
// crash-every-step-iso.test.ts), so the two run in parallel workers and each stays in its budget.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createIsoGitEngine } from '@entity-git/project';
import { createNodeProjectGit, nativeGitEngine } from '@entity-git/project/node';
import { nodeCodec, nodeStorage } from '@entity-git/node-fs';
import { describe, expect, it } from 'vitest';
import { isolateGit, judge } from './judge.js';

const tsx = join(process.cwd(), 'node_modules/.bin/tsx');
const child = join(import.meta.dirname, 'crash-step-child.ts');
const home = isolateGit();

// Runs git, counts the call (under flock: inspect spawns in parallel), and after the k-th call
// kills the node process that spawned it — once git is done, so the step is whole.
const wrapper = join(home, 'git-step.sh');
writeFileSync(
  wrapper,
  `#!/bin/sh
git "$@"
rc=$?
n=$(flock "$EG_STEPS_FILE.lock" sh -c 'n=$(( $(cat "$1" 2>/dev/null || echo 0) + 1 )); echo $n > "$1"; echo $n' _ "$EG_STEPS_FILE")
if [ "$n" = "\${EG_CRASH_AT:-}" ]; then kill -9 $PPID; fi
exit $rc
`,
);
chmodSync(wrapper, 0o755);

const AGENT_PATHS = ['agent.txt', 'notes.txt', 'old.txt'];

/** Every working-tree entry outside `.git`: path, mode, size, mtime and content hash. */
function worktree(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(dir, rel)).sort()) {
    if (rel === '' && name === '.git') continue;
    const path = rel === '' ? name : `${rel}/${name}`;
    const st = lstatSync(join(dir, path), { bigint: true });
    if (st.isDirectory()) out.push(`${path}/ ${st.mode}`, ...worktree(dir, path));
    else if (st.isSymbolicLink()) out.push(`${path} -> ${readlinkSync(join(dir, path))}`);
    else
      out.push(
        `${path} ${st.mode} ${st.size} ${st.mtimeNs} ${createHash('sha1')
          .update(readFileSync(join(dir, path)))
          .digest('hex')}`,
      );
  }
  return out;
}

/** Lock files anywhere in `.git`. */
function locks(gitdir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(gitdir, rel))) {
    const path = rel === '' ? name : `${rel}/${name}`;
    if (lstatSync(join(gitdir, path)).isDirectory()) out.push(...locks(gitdir, path));
    else if (name.endsWith('.lock')) out.push(path);
  }
  return out;
}

interface Turn {
  dir: string;
  lockDir: string;
  snapshotFile: string;
  head0: string;
  index0: Buffer;
  tree0: string[];
}

/** A user's repository with committed, ignored and tracked files, a snapshot taken before the turn, then the agent's edits. */
async function prepare(engine: 'native' | 'iso', tag: string): Promise<Turn> {
  const dir = await judge.tempDir();
  await judge.git(dir, 'init', '-q', '-b', 'main');
  await judge.write(`${dir}/README.md`, "the user's file\n");
  await judge.write(`${dir}/notes.txt`, 'v1\n');
  await judge.write(`${dir}/old.txt`, 'to be removed by the agent\n');
  await judge.write(`${dir}/.gitignore`, 'build/\n');
  await judge.git(dir, 'add', '-A');
  await judge.git(dir, 'commit', '-q', '-m', 'initial');
  await judge.write(`${dir}/build/out.log`, "the user's ignored output\n");
  const lockDir = join(home, `locks-${engine}-${tag}`);
  mkdirSync(lockDir, { recursive: true });
  const eng = engine === 'iso' ? createIsoGitEngine({ storage: nodeStorage(), codec: nodeCodec }) : nativeGitEngine();
  const snapshot = await createNodeProjectGit({ engine: eng, dir: lockDir }).beforeTurn(dir);
  const snapshotFile = join(lockDir, 'snapshot.json');
  writeFileSync(snapshotFile, JSON.stringify(snapshot));
  // The turn: the agent adds one file, edits one, removes one.
  await judge.write(`${dir}/agent.txt`, 'written by the agent\n');
  await judge.write(`${dir}/notes.txt`, 'v2, by the agent\n');
  await judge.remove(`${dir}/old.txt`);
  return {
    dir,
    lockDir,
    snapshotFile,
    head0: (await judge.git(dir, 'rev-parse', 'HEAD')).trim(),
    index0: readFileSync(join(dir, '.git/index')),
    tree0: worktree(dir),
  };
}

interface ChildOut {
  status?: string;
  reason?: string | null;
  steps?: number;
  recovered?: Array<{ commit: string; paths: string[]; userPaths: string[]; warning: string | null }> | null;
  error?: string;
  message?: string;
}

/** Runs the child; resolves its output, and whether it was killed. */
function afterTurn(
  engine: 'native' | 'iso',
  t: Turn,
  crashAt: number | null,
  stepsFile: string,
): Promise<{ killed: boolean; out: ChildOut | null }> {
  const env: NodeJS.ProcessEnv = { ...process.env, EG_GIT_WRAPPER: wrapper, EG_STEPS_FILE: stepsFile };
  if (crashAt !== null) env.EG_CRASH_AT = String(crashAt);
  else delete env.EG_CRASH_AT;
  return new Promise((resolve, reject) => {
    const p = spawn(tsx, ['--conditions=source', child, engine, t.dir, t.lockDir, t.snapshotFile], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.once('error', reject);
    p.once('exit', (code, signal) => {
      // tsx runs the script in a node of its own and exits 128+9 when that one is killed.
      if (signal === 'SIGKILL' || code === 137) resolve({ killed: true, out: null });
      else if (code === 0 && stdout !== '') resolve({ killed: false, out: JSON.parse(stdout) as ChildOut });
      else reject(new Error(`child exited ${code} ${signal}: ${stderr}`));
    });
  });
}

/** HEAD either untouched (with the index byte-identical) or one whole agent commit of exactly the agent's paths. */
async function judgeState(t: Turn, when: string): Promise<'untouched' | 'committed'> {
  const { dir, head0 } = t;
  expect(worktree(dir), `${when}: working files`).toEqual(t.tree0);
  expect(await judge.gitCode(dir, 'fsck', '--strict', '--no-dangling'), `${when}: fsck`).toBe(0);
  expect(await judge.git(dir, 'fsck', '--strict', '--no-dangling'), `${when}: fsck output`).toBe('');
  expect((await judge.git(dir, 'symbolic-ref', 'HEAD')).trim(), `${when}: HEAD's branch`).toBe('refs/heads/main');
  const head = (await judge.git(dir, 'rev-parse', 'HEAD')).trim();
  if (head === head0) {
    expect(readFileSync(join(dir, '.git/index')).equals(t.index0), `${when}: index untouched`).toBe(true);
    return 'untouched';
  }
  expect(
    (await judge.git(dir, 'rev-list', '--parents', '-n', '1', 'HEAD')).trim(),
    `${when}: one commit on the user's`,
  ).toBe(`${head} ${head0}`);
  expect(
    (await judge.git(dir, 'diff', '--name-only', head0, head)).trim().split('\n'),
    `${when}: exactly the agent's paths`,
  ).toEqual(AGENT_PATHS);
  expect(await judge.git(dir, 'show', 'HEAD:agent.txt')).toBe('written by the agent\n');
  expect(await judge.git(dir, 'show', 'HEAD:notes.txt')).toBe('v2, by the agent\n');
  expect(await judge.gitCode(dir, 'cat-file', '-e', 'HEAD:old.txt')).not.toBe(0);
  expect(await judge.git(dir, 'show', 'HEAD:README.md')).toBe("the user's file\n");
  expect(await judge.git(dir, 'log', '-1', '--format=%s', 'HEAD')).toBe(
    '[agent crash] turn 1: the agent edits three files\n',
  );
  return 'committed';
}

/** One crash and what followed it. */
interface Run {
  k: number;
  /** What the crash left: HEAD untouched, or the agent commit. */
  outcome: 'untouched' | 'committed';
  /** Lock files the crash left in `.git`. */
  left: string[];
  /** The first rerun's refusal (`repository-locked`: a lock was left, nothing moved), or null when it ran. */
  firstError: string | null;
  /** The rerun that ran (after the lock was removed, if one was left). */
  rerun: ChildOut;
  /** After that rerun: `git status --porcelain`, agent commits on the user's HEAD, lock files. */
  status: string;
  commits: number;
  locksAfter: string[];
}

const runs = { native: [] as Run[], iso: [] as Run[] };
const complete = { native: false, iso: false };

// Every step is a child process (tsx, then git). Measured alone on the shared 2-core machine at a
// load average of about 20: the native loop 915 s (18 runs, about 50 s each), each recovery test
// about 100 s; the budgets leave twice that. EG_PROGRESS=<file> appends a line per crash run.
const LOOP_TIMEOUT_MS = 1_800_000;
const TEST_TIMEOUT_MS = 300_000;

export function crashEveryStepSuite(engine: 'native' | 'iso'): void {
  describe(`the project auto-commit killed after every step (${engine === 'native' ? 'native git' : 'isomorphic-git'} engine)`, () => {
    it(
      "leaves HEAD, the index and the user's files as they were, or one whole agent commit, also after a rerun in a fresh process",
      async () => {
        // An uninterrupted run: the reference, and how many steps a turn takes.
        const ref = await prepare(engine, 'ref');
        const full = await afterTurn(engine, ref, null, join(ref.lockDir, 'steps'));
        expect(full.out).toMatchObject({ status: 'committed', recovered: null });
        expect(await judgeState(ref, 'uninterrupted')).toBe('committed');
        expect(await judge.git(ref.dir, 'status', '--porcelain')).toBe('');
        const total = full.out!.steps!;
        expect(total).toBeGreaterThan(engine === 'native' ? 8 : 4);

        // Until a run has fewer steps than k. Every run takes the same steps: the user's commit has
        // fixed dates and the child a fixed clock, so the agent commit's objects, and which fan-out
        // directories they need (each new one a step), are the same each time.
        for (let k = 1; ; k++) {
          const t = await prepare(engine, String(k));
          const run = await afterTurn(engine, t, k, join(t.lockDir, 'steps'));
          if (process.env.EG_PROGRESS)
            writeFileSync(
              process.env.EG_PROGRESS,
              `${new Date().toISOString()} k=${k}/${total} killed=${run.killed}\n`,
              { flag: 'a' },
            );
          if (!run.killed) {
            expect(k, `not killed at step ${k} of about ${total}`).toBeGreaterThan(total - 4);
            expect(run.out).toMatchObject({ status: 'committed' });
            expect(await judgeState(t, 'a run of fewer steps')).toBe('committed');
            break;
          }
          const outcome = await judgeState(t, `after a crash at step ${k}`);
          const left = locks(join(t.dir, '.git'));

          // The turn's afterTurn again, in a fresh process.
          let again = await afterTurn(engine, t, null, join(t.lockDir, 'steps-again'));
          const firstError =
            again.out?.error ?? (again.out?.reason === 'repository-locked' ? 'repository-locked' : null);
          // A rerun that was refused leaves things as the crash did.
          expect(await judgeState(t, `after the rerun (crash at step ${k})`)).toBe(
            firstError === null ? 'committed' : outcome,
          );
          if (firstError !== null) {
            expect(firstError, `rerun after step ${k}: ${again.out?.message}`).toBe('repository-locked');
            expect(left.length, `rerun after step ${k} failed with no lock left`).toBeGreaterThan(0);
            // Only a lock file the killed run left in the user's repository may stop it: git's to judge, never taken over.
            expect(locks(join(t.dir, '.git')), `rerun after step ${k}: ${again.out?.message}`).toEqual(left);
            // What git tells the user to do: remove the lock. Then a rerun finishes the turn.
            for (const l of left) await judge.remove(join(t.dir, '.git', l));
            again = await afterTurn(engine, t, null, join(t.lockDir, 'steps-again2'));
            expect(
              again.out?.error,
              `rerun after step ${k} and the lock removed: ${again.out?.message}`,
            ).toBeUndefined();
          }
          expect(await judgeState(t, `after the rerun that ran (crash at step ${k})`)).toBe('committed');
          expect(again.out, `rerun after step ${k}`).toMatchObject(
            outcome === 'committed' ? { status: 'skipped', reason: 'nothing-to-commit' } : { status: 'committed' },
          );
          runs[engine].push({
            k,
            outcome,
            left,
            firstError,
            rerun: again.out!,
            status: await judge.git(t.dir, 'status', '--porcelain'),
            commits: Number((await judge.git(t.dir, 'rev-list', '--count', `${t.head0}..HEAD`)).trim()),
            locksAfter: locks(join(t.dir, '.git')),
          });
        }
        const outcomes = runs[engine].map((r) => r.outcome);
        console.log(
          `${engine}: ${total} steps; ${runs[engine].map((r) => `${r.k}:${r.outcome}${r.firstError ? ` (${r.left.join(', ')} left: ${r.firstError})` : ''}${r.rerun.recovered ? ` recovered ${r.rerun.recovered.map((x) => x.paths.join('+') || '-').join(' ')}` : ''}`).join(' ')}`,
        );
        // Crashes before the branch moved and after it both occurred …
        expect(new Set(outcomes)).toEqual(new Set(['untouched', 'committed']));
        // … split at one step: every crash before it left all untouched, every crash after it the whole commit.
        const firstCommitted = runs[engine].find((r) => r.outcome === 'committed')!.k;
        for (const r of runs[engine])
          expect(r.outcome, `step ${r.k}`).toBe(r.k < firstCommitted ? 'untouched' : 'committed');
        complete[engine] = true;
      },
      LOOP_TIMEOUT_MS,
    );

    // Once the branch has moved, the index may still hold the user's old entries for the agent's
    // paths (native: killed after `update-ref`, before `update-index --index-info`; isomorphic-git:
    // before the new index is renamed into place), so that `git status` shows the reverse of the
    // agent commit staged. The journal's in-flight record lets the rerun finish the index update.
    it('after every crash and its rerun, git status is clean and HEAD is the one whole agent commit of the turn', () => {
      expect(complete[engine], 'the crash run above completed').toBe(true);
      for (const r of runs[engine]) {
        expect(r.status, `step ${r.k}: git status after the rerun`).toBe('');
        expect(r.commits, `step ${r.k}: agent commits on the user's HEAD`).toBe(1);
        expect(r.locksAfter, `step ${r.k}: lock files after the rerun`).toEqual([]);
        if (r.outcome === 'committed') {
          // The commit had landed: the rerun found its in-flight record and finished the index, nothing of the user's staged.
          expect(r.rerun.recovered, `step ${r.k}: recovered`).toHaveLength(1);
          expect(r.rerun.recovered![0]!.userPaths, `step ${r.k}`).toEqual([]);
          expect(r.rerun.recovered![0]!.warning, `step ${r.k}`).toBeNull();
        } else {
          expect(r.rerun.recovered ?? null, `step ${r.k}: nothing to recover`).toBeNull();
        }
      }
      // Some crash left the index with the old entries, and the rerun set exactly the agent's paths.
      expect(runs[engine].some((r) => r.rerun.recovered?.[0]?.paths.join() === AGENT_PATHS.join())).toBe(true);
    });

    // Documented behaviour (docs/project-git.md, "A crash in the middle of a commit"): both engines
    // take `index.lock` first, as `git commit` does, and hold it to the end, so a crash while it is
    // held leaves it, as a killed git does; a lock in the user's `.git` is git's to judge, never
    // taken over. The rerun is skipped as `repository-locked` (nothing moved); once the lock is
    // removed (what git tells the user to do), the rerun commits, or finishes the commit.
    it("a crash while the commit holds index.lock leaves it in the user's .git, as git does when killed: the rerun is skipped as repository-locked, and commits once it is removed", () => {
      expect(complete[engine], 'the crash run above completed').toBe(true);
      for (const r of runs[engine]) {
        if (r.left.length === 0) expect(r.firstError, `step ${r.k}: the first rerun`).toBeNull();
        else {
          expect(r.left, `step ${r.k}: locks left`).toContain('index.lock');
          expect(r.firstError, `step ${r.k}: the first rerun`).toBe('repository-locked');
        }
        expect(r.status, `step ${r.k}: status once the lock was removed and the turn rerun`).toBe('');
      }
      // Every crash from the lock taken to the new index renamed into place (isomorphic-git's last write) left it.
      const held = runs[engine].filter((r) => r.left.length > 0).map((r) => r.k);
      expect(held.length).toBeGreaterThan(4);
      expect(held).toEqual(Array.from({ length: held.length }, (_, i) => held[0]! + i));
      if (engine === 'iso') expect(held.at(-1)).toBe(runs[engine].at(-1)!.k - 1);
      else expect(held.at(-1)).toBe(runs[engine].at(-1)!.k);
    });
  });

  // The recovery's two other sides: the user staged something of their own on an agent path after
  // the crash (left as it is, with a warning, and not committed as the agent's), and the next turn's
  // beforeTurn as the recovery point (its snapshot must not take the agent's paths for the user's).
  describe(`a crash after the branch moved, then (${engine === 'native' ? 'native git' : 'isomorphic-git'} engine)`, () => {
    /** A turn killed after its branch moved and before the index was set: HEAD the agent commit, the index the user's old entries. */
    async function crashedAfterBranchMoved(tag: string): Promise<Turn> {
      const ref = await prepare(engine, `${tag}-ref`);
      const total = (await afterTurn(engine, ref, null, join(ref.lockDir, 'steps'))).out!.steps!;
      const t = await prepare(engine, tag);
      // native: the last step is update-ref (the new index is in index.lock, renamed after it);
      // isomorphic-git: the ref and the reflogs are written, then the new index (and its rename).
      const run = await afterTurn(engine, t, engine === 'native' ? total : total - 2, join(t.lockDir, 'steps'));
      expect(run.killed).toBe(true);
      expect(await judgeState(t, 'after the crash')).toBe('committed');
      expect(await judge.git(t.dir, 'status', '--porcelain')).toBe(
        'D  agent.txt\nMM notes.txt\nAD old.txt\n?? agent.txt\n',
      );
      // What git tells the user to do about a lock a killed git left.
      await judge.remove(join(t.dir, '.git/index.lock'));
      return t;
    }

    it(
      "leaves an index entry the user staged since as it is, warns, and commits none of the user's bytes",
      async () => {
        const t = await crashedAfterBranchMoved('user-staged');
        const agentCommit = (await judge.git(t.dir, 'rev-parse', 'HEAD')).trim();
        await judge.write(`${t.dir}/notes.txt`, 'v3, by the user\n');
        await judge.git(t.dir, 'add', 'notes.txt');
        const again = await afterTurn(engine, t, null, join(t.lockDir, 'steps-again'));
        expect(again.out).toMatchObject({ status: 'skipped', reason: 'uncommitted-changes' });
        expect(again.out!.recovered).toEqual([
          {
            commit: agentCommit,
            paths: ['agent.txt', 'old.txt'],
            userPaths: ['notes.txt'],
            warning: expect.stringContaining('notes.txt'),
          },
        ]);
        expect((await judge.git(t.dir, 'rev-parse', 'HEAD')).trim()).toBe(agentCommit);
        expect(await judge.git(t.dir, 'status', '--porcelain')).toBe('M  notes.txt\n');
        expect(await judge.git(t.dir, 'show', ':notes.txt')).toBe('v3, by the user\n');
        expect(await judge.git(t.dir, 'show', 'HEAD:notes.txt')).toBe('v2, by the agent\n');
        expect(locks(join(t.dir, '.git'))).toEqual([]);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      "is finished by the next turn's beforeTurn, whose snapshot then finds nothing of the user's",
      async () => {
        const t = await crashedAfterBranchMoved('before-turn');
        const agentCommit = (await judge.git(t.dir, 'rev-parse', 'HEAD')).trim();
        const eng =
          engine === 'iso' ? createIsoGitEngine({ storage: nodeStorage(), codec: nodeCodec }) : nativeGitEngine();
        const snapshot = await createNodeProjectGit({ engine: eng, dir: t.lockDir }).beforeTurn(t.dir);
        expect(snapshot.recovered).toEqual([{ commit: agentCommit, paths: AGENT_PATHS, userPaths: [], warning: null }]);
        expect(snapshot.dirty).toEqual([]);
        expect(await judge.git(t.dir, 'status', '--porcelain')).toBe('');
        expect((await judge.git(t.dir, 'rev-parse', 'HEAD')).trim()).toBe(agentCommit);
        // The record is gone: the next snapshot recovers nothing.
        expect(
          (await createNodeProjectGit({ engine: eng, dir: t.lockDir }).beforeTurn(t.dir)).recovered,
        ).toBeUndefined();
      },
      TEST_TIMEOUT_MS,
    );
  });
}
