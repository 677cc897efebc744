// The page that pages.test.ts drives with playwright (real tabs, real reloads). Built with vite
// into a static bundle and served over http on 127.0.0.1. Every call answers plain JSON; errors
// come back as { error: { code, message } } so the Node side can assert on codes.
import { reconcile, type DagNode, type Mirror, type Session } from '@entity-git/core';
import { createBrowserMirror, importRows, openIdbDag, type BrowserStorage, type IdbDag } from '../../src/index.ts';

type Result<T> = T | { error: { code: string; message: string } };

let dag: IdbDag | null = null;
let mirror: (Mirror & { storage: BrowserStorage }) | null = null;
let running: Promise<unknown> | null = null;

function need<T>(v: T | null, what: string): T {
  if (v === null) throw new Error(`call open() before ${what}`);
  return v;
}

async function guard<T>(fn: () => Promise<T>): Promise<Result<T>> {
  try {
    return await fn();
  } catch (err) {
    const e = err as { code?: string; message?: string; name?: string };
    return { error: { code: e.code ?? e.name ?? 'Error', message: e.message ?? String(err) } };
  }
}

const harness = {
  open: (o: { dbName: string; fsName: string }) =>
    guard(async () => {
      dag = await openIdbDag({ name: o.dbName });
      mirror = createBrowserMirror({ dag, fsName: o.fsName, syncLock: { timeoutMs: 60_000 } });
      return true;
    }),
  importRows: (session: Session, nodes: DagNode[]) =>
    guard(() => importRows({ into: need(dag, 'importRows'), session, nodes })),
  appendTurn: (sessionId: string, k: number, after: string) =>
    guard(async () => {
      const d = need(dag, 'appendTurn');
      await d.appendNode({
        id: `tu${k}`,
        session_id: sessionId,
        role: 'user',
        content: `question ${k}`,
        predecessor: after,
        created_at: 1779700000 + 10 * k,
      });
      await d.appendNode({
        id: `ta${k}`,
        session_id: sessionId,
        role: 'assistant',
        content: `answer ${k}`,
        predecessor: `tu${k}`,
        created_at: 1779700001 + 10 * k,
      });
      return `ta${k}`;
    }),
  sync: (sessionId: string) =>
    guard(async () => {
      const t0 = performance.now();
      const r = await need(mirror, 'sync').sync(sessionId);
      return { ...r, ms: performance.now() - t0 };
    }),
  /** Start a sync and return at once (the page may be reloaded or closed while it runs). */
  startSync: (sessionId: string) => {
    running = need(mirror, 'startSync')
      .sync(sessionId)
      .catch(() => undefined);
    return true;
  },
  waitSync: () =>
    guard(async () => {
      await running;
      return true;
    }),
  branches: (sessionId: string) =>
    guard(async () => (await need(mirror, 'branches').branches(sessionId)).map((b) => [b.name, b.commit, b.head])),
  verify: (sessionId: string) => guard(() => need(mirror, 'verify').verify(sessionId)),
  reconcile: (sessionId: string) =>
    guard(() => reconcile({ dag: need(dag, 'reconcile'), mirror: need(mirror, 'reconcile'), sessions: [sessionId] })),
  log: (sessionId: string, branch: string) =>
    guard(async () => (await need(mirror, 'log').log(sessionId, { branch })).map((c) => [c.sha, c.turn])),
  /** Every file under refs/heads with what it resolves to (a commit id) or why it does not. */
  refs: (sessionId: string) =>
    guard(async () => {
      const m = need(mirror, 'refs');
      const fs = m.storage.fs;
      const gitdir = `${m.repoPath(sessionId)}/.git`;
      const out: Record<string, string> = {};
      const walk = async (dir: string, prefix: string): Promise<void> => {
        for (const name of await fs.readdir(dir)) {
          const st = await fs.lstat(`${dir}/${name}`);
          if (st.isDirectory()) await walk(`${dir}/${name}`, `${prefix}${name}/`);
          else out[prefix + name] = String(await fs.readFile(`${dir}/${name}`, 'utf8')).trim();
        }
      };
      await walk(`${gitdir}/refs/heads`, '');
      return out;
    }),
  reflog: (sessionId: string, branch: string) =>
    guard(async () => {
      const m = need(mirror, 'reflog');
      const text = String(
        await m.storage.fs.readFile(`${m.repoPath(sessionId)}/.git/logs/refs/heads/${branch}`, 'utf8'),
      );
      return text
        .trim()
        .split('\n')
        .map((l) => l.split(' ')[1]);
    }),
  nodeIds: (sessionId: string) =>
    guard(async () => {
      const ids: string[] = [];
      for await (const n of need(dag, 'nodeIds').nodesAfter(sessionId)) ids.push(n.id);
      return ids;
    }),
  /** Fill the origin's quota with incompressible data in a scratch database, down to 64 bytes. */
  fillQuota: () =>
    guard(async () => {
      const req = indexedDB.open('filler');
      req.onupgradeneeded = () => req.result.createObjectStore('x');
      const db: IDBDatabase = await new Promise((resolve, reject) => {
        req.onsuccess = () => resolve(req.result);
        req.onerror = () => reject(req.error);
      });
      let total = 0;
      for (let size = 256 * 1024, key = 0; size >= 64; ) {
        const chunk = new Uint8Array(size);
        for (let i = 0; i < size; i += 65536) crypto.getRandomValues(chunk.subarray(i, Math.min(size, i + 65536)));
        const stored = await new Promise<boolean>((resolve) => {
          const tx = db.transaction('x', 'readwrite');
          tx.objectStore('x').put(chunk, key++);
          tx.oncomplete = () => resolve(true);
          tx.onabort = () => resolve(false);
        });
        if (stored) total += size;
        else size /= 2;
      }
      db.close();
      return total;
    }),
  usage: async () => (await navigator.storage.estimate()).usage ?? 0,
};

(globalThis as { harness?: typeof harness }).harness = harness;
export type Harness = typeof harness;
document.title = 'ready';
