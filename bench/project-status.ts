// The status check of project auto-commit (DESIGN.md §4) on a 50,000-file project: what each
// engine's dirty-path listing, and the whole afterTurn skip path around it, cost next to a plain
// `git status --porcelain` in the same run. The contenders run interleaved, round by round, so
// machine noise lands on all of them alike.
//
//   npx tsx --conditions=source bench/project-status.ts [--keep]
import { execFile, execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
// Relative imports: bench/ is not a workspace package (see bench/commit.ts).
import { nodeStorage } from '../packages/node-fs/src/index.js';
import {
  createObjectEngine,
  createProjectGit,
  type ProjectGitEngine,
  type RepoState,
} from '../packages/project/src/index.js';
import { nativeGitEngine } from '../packages/project/src/node/index.js';
import { writeResults } from './lib/measure.js';
import { IGNORED, benchProject, makeTree } from './lib/shadow-tree.js';

const FILES = 50_000;
const ROUNDS = 5;
const exec = promisify(execFile);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number) => x.toFixed(x < 10 ? 2 : 1);

interface Contender {
  name: string;
  run: () => Promise<unknown>;
  samples: number[];
}

export async function run(): Promise<void> {
  const keep = process.argv.includes('--keep');
  const { root, dir, env, git } = benchProject('status');
  // The native engine spawns git with this process's environment: the bench's gitconfig for it too.
  process.env.GIT_CONFIG_GLOBAL = env.GIT_CONFIG_GLOBAL;
  process.env.GIT_CONFIG_NOSYSTEM = '1';
  const gitVersion = execFileSync('git', ['--version'], { encoding: 'utf8' }).trim();
  console.log(
    `project-status bench: ${FILES.toLocaleString('en')} tracked files (+${IGNORED.toLocaleString('en')} ignored), ${ROUNDS} interleaved rounds`,
  );
  console.log(`node ${process.version}, ${gitVersion}, ${cpus().length} cpus, in ${root}`);
  try {
    const t0 = performance.now();
    makeTree(dir, FILES, git);
    // One status first, as a user's editor would have run: the index then holds fresh stat data.
    git('status', '--porcelain');
    console.log(`  setup (write, git add, commit, first status): ${ms((performance.now() - t0) / 1000)} s, untimed`);

    const native = nativeGitEngine();
    const iso = createObjectEngine({ storage: nodeStorage() });
    const repoOf = async (engine: ProjectGitEngine): Promise<RepoState> => {
      const s = await engine.inspect(dir);
      if (s.kind !== 'repository') throw new Error(`the bench project is ${s.kind}`);
      return s.repo;
    };
    const [nativeRepo, isoRepo] = [await repoOf(native), await repoOf(iso)];
    // Both engines must see the clean tree as clean before anything is timed.
    for (const [name, engine, repo] of [
      ['native', native, nativeRepo],
      ['iso', iso, isoRepo],
    ] as const) {
      const changes = await engine.status(repo);
      if (changes.length !== 0)
        throw new Error(
          `${name} sees ${changes.length} changes in a clean tree: ${changes
            .slice(0, 3)
            .map((c) => c.path)
            .join(', ')}`,
        );
    }

    // The turn: the user had an edit of their own before it, the agent wrote one file.
    const pgNative = createProjectGit({ engine: native });
    const pgIso = createProjectGit({ engine: iso });
    writeFileSync(join(dir, 'src', 'm000', 'f000.ts'), 'export const v0_0 = -1; // the user\n');
    const [snapNative, snapIso] = [await pgNative.beforeTurn(dir), await pgIso.beforeTurn(dir)];
    writeFileSync(join(dir, 'src', 'm001', 'agent.ts'), 'export const agent = true;\n');
    const turn = {
      workdir: dir,
      sessionId: 'bench',
      turn: 1,
      userMessage: 'edit',
      model: 'bench',
      touchedPaths: ['src/m001/agent.ts'],
    };
    const skipped = async (pg: typeof pgNative, snapshot: typeof snapNative) => {
      const r = await pg.afterTurn({ ...turn, snapshot });
      if (r.status !== 'skipped' || r.reason !== 'uncommitted-changes')
        throw new Error(`expected the uncommitted-changes skip, got ${JSON.stringify(r)}`);
    };

    const contenders: Contender[] = [
      {
        name: 'git status --porcelain (spawned)',
        run: () => exec('git', ['status', '--porcelain'], { cwd: dir, env, maxBuffer: 1 << 28 }),
        samples: [],
      },
      { name: 'native engine: status()', run: () => native.status(nativeRepo), samples: [] },
      { name: 'native engine: afterTurn skip path', run: () => skipped(pgNative, snapNative), samples: [] },
      { name: 'object engine: status()', run: () => iso.status(isoRepo), samples: [] },
      { name: 'object engine: afterTurn skip path', run: () => skipped(pgIso, snapIso), samples: [] },
    ];
    for (const c of contenders) await c.run();
    for (let round = 0; round < ROUNDS; round++) {
      for (const c of contenders) {
        const start = performance.now();
        await c.run();
        c.samples.push(performance.now() - start);
      }
    }
    const base = median(contenders[0]!.samples);
    console.log('');
    console.log('| what | median ms | p90 ms | × git status |');
    console.log('| --- | --- | --- | --- |');
    for (const c of contenders) {
      const sorted = [...c.samples].sort((a, b) => a - b);
      console.log(
        `| ${c.name} | ${ms(median(c.samples))} | ${ms(sorted[Math.floor(sorted.length * 0.9)] ?? sorted[sorted.length - 1]!)} | ${(median(c.samples) / base).toFixed(2)} |`,
      );
    }
    console.log('');
    console.log(
      '× git status: the median divided by plain `git status --porcelain`; the skip path is inspect + lock + inspect + status + classification.',
    );
    // The skip must have left the user's tree as it was: still exactly the two changes.
    const left = execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], {
      cwd: dir,
      env,
      encoding: 'utf8',
    });
    if (left !== ' M src/m000/f000.ts\n?? src/m001/agent.ts\n') throw new Error(`the skip changed the tree: ${left}`);

    writeResults('project-status', {
      node: process.version,
      git: gitVersion,
      cpus: cpus().length,
      platform: `${process.platform}-${process.arch}`,
      files: FILES,
      ignored: IGNORED,
      unit: 'ms per call',
      results: contenders.map((c) => ({
        name: c.name,
        median: median(c.samples),
        ratioToGitStatus: median(c.samples) / base,
        samples: c.samples,
      })),
    });
  } finally {
    if (keep) console.log(`kept ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
