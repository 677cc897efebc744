// Runs in Node before the browser tests: a real smart-HTTP git server (native git http-backend,
// CORS enabled) on 127.0.0.1, holding the golden session pushed from Node — so a test in
// Chromium can fetch it and compare ids. Tests read it with `inject('gitServer')`.
import { MemoryDag } from '@entity-git/core';
import { defineRemote, pushSession } from '@entity-git/remote';
import { createNodeMirror, nodeStorage } from '@entity-git/node-fs';
import { GOLDEN_SESSION, writeGolden } from '@entity-git/test-utils';
import http from 'isomorphic-git/http/node';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startGitHttpServer } from '../../remote/test/git-http-server.js';

export interface GitServerContext {
  /** `http://127.0.0.1:<port>/sessions/{session}.git` */
  template: string;
  /** The token the server wants as the Basic password. */
  token: string;
  /** A session pushed from Node (the golden one). */
  goldenSession: string;
  /** A session whose repository exists on the server, empty, for the browser to push into. */
  emptySession: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    gitServer: GitServerContext;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const token = 'browser-token';
  const server = await startGitHttpServer({ token });
  const remote = defineRemote({ url: server.template, http, onAuth: () => ({ username: 'node', password: token }) });
  const dag = new MemoryDag();
  await writeGolden(dag);
  const root = mkdtempSync(join(tmpdir(), 'eg-browser-remote-'));
  await createNodeMirror({ dag, root }).sync(GOLDEN_SESSION.id);
  server.createRepo(`sessions/${GOLDEN_SESSION.id}.git`);
  await pushSession({ remote, storage: nodeStorage(), root, sessionId: GOLDEN_SESSION.id });
  server.createRepo('sessions/from-browser-1.git');
  project.provide('gitServer', {
    template: server.template,
    token,
    goldenSession: GOLDEN_SESSION.id,
    emptySession: 'from-browser-1',
  });
  return () => server.close();
}
