import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { GOLDEN_SESSION, goldenNodes } from '@entity-git/test-utils';
import { openSqlite } from '@entity-git/sqlite';
import { afterAll } from 'vitest';

export const CLI_DIR = fileURLToPath(new URL('..', import.meta.url));
export const REPO_ROOT = join(CLI_DIR, '..', '..');
export const BIN = join(CLI_DIR, 'src', 'bin.ts');
const requireFromRoot = createRequire(join(REPO_ROOT, 'package.json'));
/** `node --import tsx --conditions=source src/bin.ts`: `tsx --conditions=source` minus the tsx CLI's parent process. */
export const TSX_COMMAND = [
  process.execPath,
  '--import',
  pathToFileURL(requireFromRoot.resolve('tsx')).href,
  '--conditions=source',
  BIN,
];

/**
 * The command line that runs `entity-git`: `[...COMMAND, ...args]`. Plain node on the built
 * package (dist/bin.js, which the integration project's global setup builds with `tsc -b`): a run
 * costs ~0.2 s instead of ~0.9 s under tsx's loader hooks, which see every module of kysely and
 * isomorphic-git. Set ENTITY_GIT_CLI_TEST_TSX=1 to run every test through tsx on the sources instead.
 */
export const COMMAND: readonly string[] = process.env.ENTITY_GIT_CLI_TEST_TSX
  ? TSX_COMMAND
  : [process.execPath, join(CLI_DIR, 'dist', 'bin.js')];

const made: string[] = [];
// A test file's directories are removed when it ends: left behind, a whole run's came to hundreds
// of MB in /tmp. One a child still writes into is left (a warning), never a failure.
afterAll(() => {
  for (const dir of made.splice(0)) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    } catch (err) {
      console.warn(`left ${dir}: ${String(err)}`);
    }
  }
});

export function tempDir(prefix = 'entity-git-cli-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `entity-git ARGS` from source as a child process (stdout and stderr are pipes: not a TTY). */
export function run(
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(COMMAND[0]!, [...COMMAND.slice(1), ...args], {
      cwd: options.cwd ?? REPO_ROOT,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export function json<T = any>(r: Run): T {
  if (r.code !== 0) throw new Error(`exit ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

/** Native git in a session repository; its stdout without the final newline. */
export function git(cwd: string, ...args: string[]): string {
  return gitRaw(cwd, ...args).replace(/\n$/, '');
}

export function gitRaw(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd },
  });
}

/** Every branch of a repository with its commit, as native git sees it. */
export function revParseAll(repo: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of git(repo, 'for-each-ref', '--format=%(refname:short) %(objectname)', 'refs/heads').split('\n')) {
    if (line === '') continue;
    const [name, sha] = line.split(' ');
    out[name!] = git(repo, 'rev-parse', '--verify', `${name}^{commit}`);
    if (out[name!] !== sha) throw new Error(`rev-parse ${name} disagrees with for-each-ref`);
  }
  out.HEAD = git(repo, 'symbolic-ref', '--short', 'HEAD');
  return out;
}

export const PLAIN_ID = 'plain-2';
export const SHORT_ID = 'short-3';

/**
 * A SQLite DAG written with the writer: the golden session (tool calls with parallel results, a
 * retry, an edited user message, a continue-from-an-old-turn, a pending placeholder) and a plain
 * two-turn session with a tool call, and a one-turn session.
 */
export async function buildDb(file: string): Promise<void> {
  const store = await openSqlite({ file });
  try {
    const { writer } = store;
    await writer.createSession({ ...GOLDEN_SESSION, head: null });
    for (const n of goldenNodes()) {
      await writer.appendNode({
        id: n.id,
        session_id: n.session_id,
        role: n.role,
        content: n.content,
        predecessor: n.predecessor,
        caller: n.caller,
        created_at: n.created_at,
        metadata: n.metadata,
      });
    }
    await writer.setHead(GOLDEN_SESSION.id, GOLDEN_SESSION.head);

    await writer.createSession({ id: PLAIN_ID, title: 'Plain', model: 'm-1', created_at: 1779600000 });
    const t = 1779600000;
    await writer.appendNode({ id: 'p-u1', session_id: PLAIN_ID, role: 'user', content: 'Hello', created_at: t + 1 });
    await writer.appendNode({
      id: 'p-a1',
      session_id: PLAIN_ID,
      role: 'assistant',
      content: 'Hi! How can I help?',
      predecessor: 'p-u1',
      created_at: t + 2,
    });
    await writer.appendNode({
      id: 'p-u2',
      session_id: PLAIN_ID,
      role: 'user',
      content: 'Read the README',
      predecessor: 'p-a1',
      created_at: t + 3,
    });
    await writer.appendNode({
      id: 'p-a2',
      session_id: PLAIN_ID,
      role: 'assistant',
      content: { text: 'Reading.', tool_calls: [{ id: 'c1', name: 'read' }] },
      predecessor: 'p-u2',
      created_at: t + 4,
    });
    await writer.appendNode({
      id: 'p-t1',
      session_id: PLAIN_ID,
      role: 'tool',
      content: '# README',
      predecessor: 'p-a2',
      caller: 'p-a2',
      created_at: t + 5,
      metadata: { tool: 'read' },
    });
    await writer.appendNode({
      id: 'p-a3',
      session_id: PLAIN_ID,
      role: 'assistant',
      content: 'It is a README.',
      predecessor: 'p-t1',
      created_at: t + 6,
    });

    await writer.createSession({ id: SHORT_ID, title: 'Short', created_at: 1779700000 });
    await writer.appendNode({
      id: 'q-u1',
      session_id: SHORT_ID,
      role: 'user',
      content: 'Ping',
      created_at: 1779700001,
    });
    await writer.appendNode({
      id: 'q-a1',
      session_id: SHORT_ID,
      role: 'assistant',
      content: 'Pong',
      predecessor: 'q-u1',
      created_at: 1779700002,
    });
  } finally {
    await store.close();
  }
}
