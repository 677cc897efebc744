// Real tabs and real reloads: this Node-side test builds test/page (the harness) with vite,
// serves it over http on 127.0.0.1, and drives Debian's chromium with playwright. A vitest
// browser test cannot reload its own page nor open a second tab of its context; this can, so
// what is tested here is what a user's browser does: a page killed mid-sync (reload, closed
// tab) with its JS, its Web Locks and LightningFS's unsaved directory tree gone at once.
import { MemoryDag, type DagNode, type Session } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { GOLDEN_SESSION, goldenNodes } from '@entity-git/test-utils';
import { createReadStream, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './page/harness.js';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const SID = GOLDEN_SESSION.id;
const T0 = 1779600000;

let outDir = '';
let server: Server | null = null;
let url = '';
let browser: Browser | null = null;

let counter = 0;
const unique = (p: string) => `${p}-${process.pid}-${++counter}-${Date.now().toString(36)}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Call = { [K in keyof Harness]: (...args: Parameters<Harness[K]>) => Promise<Awaited<ReturnType<Harness[K]>>> };

/** The harness of one page, called from Node; a `{ error }` answer becomes a thrown error unless `raw`. */
function harness(page: Page): Call {
  return new Proxy({} as Call, {
    // Not a thenable: `await` must not take the proxy for a promise.
    get: (_, name: string) =>
      name === 'then'
        ? undefined
        : async (...args: unknown[]) => {
            const out = await page.evaluate(
              ([n, a]) =>
                (globalThis as unknown as { harness: Record<string, (...x: unknown[]) => unknown> }).harness[
                  n as string
                ]!(...(a as unknown[])),
              [name, args] as const,
            );
            return out;
          },
  });
}

function ok<T>(value: T | { error: { code: string; message: string } }): T {
  if (typeof value === 'object' && value !== null && 'error' in value)
    throw new Error(`${value.error.code}: ${value.error.message}`);
  return value as T;
}

async function openPage(
  context: BrowserContext,
  names: { dbName: string; fsName: string },
): Promise<{ page: Page; h: Call }> {
  const page = await context.newPage();
  await page.goto(url);
  await page.waitForFunction(() => document.title === 'ready');
  const h = harness(page);
  ok(await h.open(names));
  return { page, h };
}

async function reopen(page: Page, names: { dbName: string; fsName: string }): Promise<Call> {
  await page.reload();
  await page.waitForFunction(() => document.title === 'ready');
  const h = harness(page);
  ok(await h.open(names));
  return h;
}

/**
 * The golden session grown by 24 more turns continuing from its head, with tool calls and a
 * retry every sixth turn (a new branch each): enough objects and ref moves that a sync takes a
 * few hundred milliseconds in Chromium, so reloads at 0–600 ms land in every phase of it.
 */
function grownRows(): { session: Session; nodes: DagNode[] } {
  const nodes = goldenNodes();
  let seq = nodes.length;
  let prev = GOLDEN_SESSION.head!;
  const add = (
    id: string,
    role: DagNode['role'],
    predecessor: string,
    content: string,
    extra: Partial<DagNode> = {},
  ) => {
    seq++;
    nodes.push({
      id,
      session_id: SID,
      seq,
      role,
      content,
      predecessor,
      caller: null,
      created_at: T0 + seq,
      metadata: null,
      ...extra,
    });
  };
  for (let k = 1; k <= 24; k++) {
    add(`xu${k}`, 'user', prev, `step ${k}: look at file ${k}.ts`);
    add(`xa${k}`, 'assistant', `xu${k}`, `reading ${k}`, { metadata: { tokens: k } });
    add(`xt${k}`, 'tool', `xa${k}`, `contents of ${k}.ts `.repeat(20), {
      caller: `xa${k}`,
      metadata: { tool: 'read' },
    });
    add(`xf${k}`, 'assistant', `xt${k}`, `file ${k} is fine`);
    if (k % 6 === 0) add(`xf${k}r`, 'assistant', `xt${k}`, `file ${k} could be better`);
    prev = `xf${k}`;
  }
  return { session: { ...GOLDEN_SESSION, head: prev }, nodes };
}

/** What node-fs commits for the same rows: the ids Chromium must give. */
async function nodeTips(rows: { session: Session; nodes: DagNode[] }): Promise<Array<[string, string, boolean]>> {
  const dag = new MemoryDag();
  await dag.createSession({ ...rows.session, head: null });
  for (const n of rows.nodes) await dag.addNode(n);
  await dag.setHead(SID, rows.session.head);
  const root = mkdtempSync(join(tmpdir(), 'eg-node-'));
  const mirror = createNodeMirror({ dag, root });
  await mirror.sync(SID);
  const tips = (await mirror.branches(SID)).map((b): [string, string, boolean] => [b.name, b.commit, b.head]);
  rmSync(root, { recursive: true, force: true });
  return tips;
}

const GOLDEN: { session: Session; nodes: DagNode[] } = { session: { ...GOLDEN_SESSION }, nodes: goldenNodes() };

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: run \`node scripts/setup.mjs\` (it installs Debian's chromium)`);
  outDir = mkdtempSync(join(tmpdir(), 'eg-harness-'));
  await build({
    configFile: false,
    root: join(import.meta.dirname, 'page'),
    logLevel: 'warn',
    resolve: { conditions: ['source', 'browser', 'module', 'import', 'default'] },
    build: { outDir, emptyOutDir: true, minify: false, target: 'es2022', reportCompressedSize: false },
  });
  const types: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.map': 'application/json' };
  server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(
      /^(\.\.[/\\])+/,
      '',
    );
    const file = join(outDir, path === '/' ? 'index.html' : path);
    if (!file.startsWith(outDir) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, {
      'content-type': types[extname(file)] ?? 'application/octet-stream',
      'cache-control': 'no-store',
    });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const address = server.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
});

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  if (outDir) rmSync(outDir, { recursive: true, force: true });
});

describe('real pages in Chromium (playwright, two tabs, reloads)', () => {
  it('reload after a sync resolved, at 0–600 ms: every ref there, verify clean without any repair', async () => {
    const rows = grownRows();
    const expected = await nodeTips(rows);
    const context = await browser!.newContext();
    for (const delay of [0, 300, 600]) {
      const names = { dbName: unique('dag'), fsName: unique('fs') };
      const { page, h } = await openPage(context, names);
      ok(await h.importRows(rows.session, rows.nodes));
      ok(await h.sync(SID));
      await sleep(delay);
      const again = await reopen(page, names);
      expect(ok(await again.verify(SID)), `delay ${delay}`).toEqual({ sessionId: SID, ok: true, differences: [] });
      expect(ok(await again.branches(SID))).toEqual(expected);
      expect(ok(await again.sync(SID))).toMatchObject({ noop: true, commitsWritten: 0 });
      await page.close();
    }
    await context.close();
  });

  it('reload during a sync, at 0–600 ms after it starts: refs resolve, and verify is clean or reconcile repairs it to the Node ids', async () => {
    const grown = grownRows();
    const expected = await nodeTips(grown);
    const context = await browser!.newContext();
    const outcomes: string[] = [];
    let syncMs = 0;
    for (const delay of [0, 60, 120, 180, 210, 240, 270, 300, 350, 450, 600]) {
      const names = { dbName: unique('dag'), fsName: unique('fs') };
      const { page, h } = await openPage(context, names);
      ok(await h.importRows(GOLDEN.session, GOLDEN.nodes));
      ok(await h.sync(SID));
      ok(await h.importRows(grown.session, grown.nodes));
      await h.startSync(SID);
      await sleep(delay);
      const again = await reopen(page, names);
      // Every ref left behind names a commit whose history reads (no torn or dangling ref).
      const refs = ok(await again.refs(SID));
      for (const [name, value] of Object.entries(refs)) {
        if (name.endsWith('.lock')) continue;
        expect(value, `ref ${name} at delay ${delay}`).toMatch(/^[0-9a-f]{40}$/);
        expect(ok(await again.log(SID, name)).length, `log of ${name} at delay ${delay}`).toBeGreaterThan(0);
      }
      const locks = Object.keys(refs).filter((n) => n.endsWith('.lock'));
      const before = ok(await again.verify(SID));
      let outcome = before.ok
        ? 'clean'
        : `repaired (${[...new Set(before.differences.map((d) => d.kind))].join(', ')})`;
      if (!before.ok) {
        const report = ok(await again.reconcile(SID));
        expect(report.ok, `reconcile at delay ${delay}: ${JSON.stringify(report.entries)}`).toBe(true);
        expect(ok(await again.verify(SID)).ok).toBe(true);
      }
      if (locks.length > 0) outcome += `, abandoned ${locks.join(' ')} taken over`;
      expect(ok(await again.branches(SID)), `branches at delay ${delay}`).toEqual(expected);
      expect(ok(await again.sync(SID))).toMatchObject({ commitsWritten: 0 });
      outcomes.push(`${delay} ms: ${outcome}`);
      // How long the interrupted sync takes undisturbed, for the record.
      if (delay === 600) {
        const names2 = { dbName: unique('dag'), fsName: unique('fs') };
        const { page: p2, h: h2 } = await openPage(context, names2);
        ok(await h2.importRows(GOLDEN.session, GOLDEN.nodes));
        ok(await h2.sync(SID));
        ok(await h2.importRows(grown.session, grown.nodes));
        syncMs = ok(await h2.sync(SID)).ms;
        await p2.close();
      }
      await page.close();
    }
    console.log(
      `[browser-fs] reload during a sync (an undisturbed one takes ${Math.round(syncMs)} ms):\n  ${outcomes.join('\n  ')}`,
    );
    await context.close();
  });

  it('two tabs of one context syncing the same session at once: no lost commit, no lock timeout, the Node ids', async () => {
    const context = await browser!.newContext();
    const names = { dbName: unique('dag'), fsName: unique('fs') };
    const a = await openPage(context, names);
    const b = await openPage(context, names);
    ok(await a.h.importRows(GOLDEN.session, GOLDEN.nodes));
    const first = await Promise.all([a.h.sync(SID), b.h.sync(SID)]);
    expect(first.map((r) => ok(r).commitsWritten).sort()).toEqual([0, 5]);
    const rounds = 4;
    let tip = GOLDEN_SESSION.head!;
    for (let k = 1; k <= rounds; k++) {
      tip = ok(await (k % 2 ? a : b).h.appendTurn(SID, k, tip));
      const results = await Promise.all([a.h.sync(SID), b.h.sync(SID)]);
      expect(
        results.map((r) => ok(r).commitsWritten).reduce((x, y) => x + y, 0),
        `round ${k}`,
      ).toBe(1);
    }
    // Every turn is on the branch, each committed once (one reflog entry per move).
    expect(ok(await b.h.log(SID, 'fork-u4')).map(([, turn]) => turn)).toEqual(
      Array.from({ length: rounds + 2 }, (_, i) => rounds + 2 - i),
    );
    expect(ok(await a.h.reflog(SID, 'fork-u4'))).toHaveLength(rounds + 1);
    expect(ok(await a.h.verify(SID)).ok).toBe(true);
    expect(ok(await b.h.verify(SID)).ok).toBe(true);
    const dag = new MemoryDag();
    await dag.createSession({ ...GOLDEN.session, head: null });
    for (const n of GOLDEN.nodes) await dag.addNode(n);
    tip = GOLDEN_SESSION.head!;
    for (let k = 1; k <= rounds; k++) {
      await dag.appendNode({
        id: `tu${k}`,
        session_id: SID,
        role: 'user',
        content: `question ${k}`,
        predecessor: tip,
        created_at: 1779700000 + 10 * k,
      });
      await dag.appendNode({
        id: `ta${k}`,
        session_id: SID,
        role: 'assistant',
        content: `answer ${k}`,
        predecessor: `tu${k}`,
        created_at: 1779700001 + 10 * k,
      });
      tip = `ta${k}`;
    }
    await dag.setHead(SID, GOLDEN_SESSION.head);
    const root = mkdtempSync(join(tmpdir(), 'eg-node-'));
    const nodeMirror = createNodeMirror({ dag, root });
    await nodeMirror.sync(SID);
    expect(ok(await a.h.branches(SID))).toEqual(
      (await nodeMirror.branches(SID)).map((x) => [x.name, x.commit, x.head]),
    );
    rmSync(root, { recursive: true, force: true });
    await context.close();
  });

  it('a tab closed in the middle of a sync: the other tab takes over its abandoned locks and finishes', async () => {
    const grown = grownRows();
    const expected = await nodeTips(grown);
    const context = await browser!.newContext();
    const names = { dbName: unique('dag'), fsName: unique('fs') };
    const a = await openPage(context, names);
    const b = await openPage(context, names);
    ok(await a.h.importRows(GOLDEN.session, GOLDEN.nodes));
    ok(await a.h.sync(SID));
    ok(await a.h.importRows(grown.session, grown.nodes));
    await a.h.startSync(SID);
    await sleep(120);
    await a.page.close();
    // No REF_LOCKED, no LOCK_TIMEOUT: whatever the closed tab held is released or taken over.
    ok(await b.h.sync(SID));
    const report = ok(await b.h.reconcile(SID));
    expect(report.ok).toBe(true);
    expect(ok(await b.h.branches(SID))).toEqual(expected);
    await context.close();
  });

  it('a full origin: DAG appends and syncs fail with QUOTA_EXCEEDED, and what was stored stays readable', async () => {
    const context = await browser!.newContext();
    const page = await context.newPage();
    await page.goto(url);
    await page.waitForFunction(() => document.title === 'ready');
    // The limit must be set before the page first opens IndexedDB: Chromium reads it then.
    const cdp = await context.newCDPSession(page);
    await cdp.send('Storage.overrideQuotaForOrigin', { origin: new URL(url).origin, quotaSize: 3 * 1024 * 1024 });
    const h = harness(page);
    const names = { dbName: unique('dag'), fsName: unique('fs') };
    ok(await h.open(names));
    // Random printable text: ~2 MiB in the DAG, ~1.7 MiB more once deflated into a blob.
    const noise = (n: number) =>
      Array.from({ length: n }, () => String.fromCharCode(33 + Math.floor(Math.random() * 90))).join('');
    const big = noise(2 << 20);
    const session: Session = { ...GOLDEN_SESSION, id: 'full', head: null, metadata: null };
    const node = (id: string, seq: number, content: string, predecessor: string | null): DagNode => ({
      id,
      session_id: 'full',
      seq,
      role: seq % 2 ? 'user' : 'assistant',
      content,
      predecessor,
      caller: null,
      created_at: T0 + seq,
      metadata: null,
    });
    ok(await h.importRows(session, [node('u1', 1, 'dump it', null), node('a1', 2, big, 'u1')]));
    const sync = await h.sync('full');
    expect(sync).toMatchObject({ error: { code: 'QUOTA_EXCEEDED' } });
    const append = await h.importRows({ ...session, head: null }, [node('u2', 3, big, 'a1')]);
    expect(append).toMatchObject({ error: { code: 'QUOTA_EXCEEDED' } });
    // The DAG is as it was before the failures; the repository is behind it, not damaged.
    expect(ok(await h.nodeIds('full'))).toEqual(['u1', 'a1']);
    // Behind: no branch, and no meta ref yet (the row is written after the turns).
    expect(ok(await h.verify('full')).differences.map((d) => d.kind)).toEqual(['missing-branch', 'meta-differs']);
    // With not even room for LightningFS to save its tree when it goes idle, the page still works
    // afterwards (LightningFS alone would stay wedged, and hold its lock against other tabs).
    expect(ok(await h.fillQuota())).toBeGreaterThan(0);
    expect(ok(await h.verify('full')).ok).toBe(false);
    await sleep(1200);
    expect(ok(await h.verify('full')).differences.map((d) => d.kind)).toEqual(['missing-branch', 'meta-differs']);
    const other = await context.newPage();
    await other.goto(url);
    await other.waitForFunction(() => document.title === 'ready');
    const h2 = harness(other);
    ok(await h2.open({ dbName: unique('dag'), fsName: names.fsName }));
    expect(ok(await h2.refs('full'))).toEqual({});
    await context.close();
  });
});
