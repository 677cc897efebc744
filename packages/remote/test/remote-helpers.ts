// What the remote tests share: a smart-HTTP host (native git http-backend behind a node:http server
// on 127.0.0.1, started once per test file), a machine holding the golden session, more turns, and
// native git's view of the host and of a local repository.
import { MemoryDag, type EntityGitError } from '@entity-git/core';
import { defineRemote, type RemoteOptions } from '@entity-git/remote';
import { createNodeMirror, nodeStorage } from '@entity-git/node-fs';
import { GOLDEN_SESSION, writeGolden } from '@entity-git/test-utils';
import http from 'isomorphic-git/http/node';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll } from 'vitest';
import { startGitHttpServer, type GitHttpServer } from './git-http-server.js';
import { git, tempDir } from '../../node-fs/test/helpers.js';

export const SID = GOLDEN_SESSION.id;
export const GOLDEN_TIPS = {
  main: '2d6739e6531c79338d437bcd12e6a1911db229f3',
  'retry-a4r': 'd080c326d39a5951408d85b37d2ad5734ef66218',
  'fork-u2e': '91b1853f7d112a2d1c527c327cbb1fe5c82401c6',
  'fork-u4': '17a4c695c75333ca3ac7710e31cd26d953bab6d6',
};
export const TOKEN = 's3cret-token';
const run = promisify(execFile);

export let server: GitHttpServer;
/** Starts the host before the test file's tests and stops it after them: called once, at the top of each file. */
export function useGitHttpServer(): void {
  beforeAll(async () => {
    server = await startGitHttpServer({ token: TOKEN });
  });
  afterAll(async () => {
    await server?.close();
  });
}

export const storage = nodeStorage();
export const remoteOf = (overrides: Partial<RemoteOptions> = {}) =>
  defineRemote({ url: server.template, http, onAuth: () => ({ username: 'agent', password: TOKEN }), ...overrides });

/** Native git against the in-process server: asynchronous, so the server can answer. */
async function gitNet(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await run('git', ['-c', `http.extraHeader=Authorization: Bearer ${TOKEN}`, ...args], {
    cwd,
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd, GIT_TERMINAL_PROMPT: '0' },
  });
  return stdout;
}

/** `git ls-remote` of the bare repository, through the HTTP server like any client. */
export async function lsRemote(sessionPath: string): Promise<Record<string, string>> {
  const url = `${server.origin}/sessions/${sessionPath}.git`;
  const out = await gitNet(tempDir(), 'ls-remote', url);
  return Object.fromEntries(
    out
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('\t').reverse()),
  );
}
export const headsOf = (refs: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(refs)
      .filter(([r]) => r.startsWith('refs/heads/'))
      .map(([r, o]) => [r.slice(11), o]),
  );
export const localTips = (dir: string) =>
  Object.fromEntries(
    git(dir, 'for-each-ref', '--format=%(refname:short) %(objectname)', 'refs/heads')
      .trim()
      .split('\n')
      .map((l) => l.split(' ')),
  );

export async function goldenMachine(sessionId = SID) {
  const dag = new MemoryDag();
  await writeGolden(dag, { sessionId });
  const root = tempDir();
  const mirror = createNodeMirror({ dag, root });
  await mirror.sync(sessionId);
  return { dag, root, mirror, dir: mirror.repoPath(sessionId) };
}

export async function addTurn(dag: MemoryDag, sid: string, t: number, prev: string): Promise<string> {
  const base = GOLDEN_SESSION.created_at + 1000 + t * 10;
  await dag.appendNode({
    id: `x-u${t}`,
    session_id: sid,
    role: 'user',
    content: `more ${t}`,
    predecessor: prev,
    created_at: base,
  });
  await dag.appendNode({
    id: `x-a${t}`,
    session_id: sid,
    role: 'assistant',
    content: `done ${t}`,
    predecessor: `x-u${t}`,
    created_at: base + 1,
  });
  return `x-a${t}`;
}

/** The typed error a promise rejects with (fails the test if it resolves). */
export const failure = (p: Promise<unknown>): Promise<EntityGitError> =>
  p.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e as EntityGitError,
  );
