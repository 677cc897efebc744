// What an e2e file of the replay app needs: the app built with vite into a directory of its own
// (files run in parallel), the ws-server over a fresh SQLite DAG with the demo sessions, and
// Debian's chromium. Screenshots go to test-output/<dir>/ (gitignored).
import { createNodeProjectGit, ShadowProjectGit } from '@entity-git/project/node';
import { randomBytes } from 'node:crypto';
import { openSqlite, type SqlStore } from '@entity-git/sqlite';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright';
import { build } from 'vite';
import { createServer, echoAgent, seedDemo, type EntityGitServer, type ServerOptions } from 'ws-server';

export const CHROMIUM = '/usr/bin/chromium';
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
export const APP_DIR = resolve(import.meta.dirname, '..');
export const REPO = resolve(APP_DIR, '../..');

export interface Harness {
  tmp: string;
  store: SqlStore;
  server: EntityGitServer;
  browser: Browser;
  url: string;
  token: string;
  shots: string;
  /** A new context (own storage) and page at `width`×`height`, its console errors collected. */
  open(width: number, height: number): Promise<{ context: BrowserContext; page: Page; errors: string[] }>;
  close(): Promise<void>;
}

export async function startHarness(
  name: string,
  seed?: (store: SqlStore) => Promise<void>,
  /**
   * Another agent or project git than the echo agent and projects in auto-commit mode (the
   * server's default is shadow mode; these suites test the agent commits, the warning, the undo).
   */
  serverOptions: Pick<ServerOptions, 'agent' | 'projectGit'> = {},
): Promise<Harness> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: run \`node scripts/setup.mjs\` (it installs Debian's chromium)`);
  const shots = join(REPO, 'test-output', name);
  rmSync(shots, { recursive: true, force: true });
  mkdirSync(shots, { recursive: true });
  const built = join(REPO, 'test-output', `${name}-app`);
  await build({
    root: APP_DIR,
    configFile: join(APP_DIR, 'vite.config.ts'),
    logLevel: 'warn',
    build: { outDir: built, emptyOutDir: true },
  });
  const tmp = mkdtempSync(join(tmpdir(), `eg-${name}-`));
  const store = await openSqlite({ file: join(tmp, 'dag.db') });
  await seedDemo(store);
  await seed?.(store);
  const token = `${name}-${randomBytes(24).toString('base64url')}`;
  const server = await createServer({
    db: store,
    root: join(tmp, 'sessions'),
    port: 0,
    token,
    staticDir: built,
    agent: echoAgent,
    projectGit: new ShadowProjectGit({
      root: join(tmp, 'sessions', '.shadow'),
      defaultMode: 'auto-commit',
      autoCommit: createNodeProjectGit({ dir: join(tmp, 'locks') }),
    }),
    ...serverOptions,
  });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  let closed = false;
  return {
    tmp,
    store,
    server,
    browser,
    url: server.url,
    token,
    shots,
    async open(width, height) {
      // bypassCSP: the app's pages forbid inline scripts; axe-core is injected by the test, not the app.
      const context = await browser.newContext({ viewport: { width, height }, bypassCSP: true });
      // A busy 2-core machine (the whole suite beside Chromium) can take past playwright's 30 s.
      context.setDefaultTimeout(90_000);
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      page.on('pageerror', (e) => errors.push(e.message));
      return { context, page, errors };
    },
    async close() {
      if (closed) return;
      closed = true;
      await browser.close();
      await server.close().catch(() => undefined);
      await store.close();
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}

/** Wait until the page is idle and the turn indicator reads `text`. */
export async function waitTurn(page: Page, text: string): Promise<void> {
  await page.waitForFunction(
    (t) =>
      document.querySelector('main')?.dataset.loading === 'false' &&
      document.querySelector('[data-testid=turn]')?.textContent === t,
    text,
    { timeout: 30_000 },
  );
}

export async function waitText(page: Page, testId: string, pattern: string): Promise<void> {
  try {
    await page.waitForFunction(
      ([id, p]) =>
        [...document.querySelectorAll(`[data-testid="${id}"]`)].some((el) => (el.textContent ?? '').includes(p!)),
      [testId, pattern] as const,
      { timeout: 30_000 },
    );
  } catch (err) {
    throw new Error(
      `no [data-testid=${testId}] reads ${JSON.stringify(pattern)}; the page reads:\n${await page.innerText('body').catch(() => '?')}`,
      { cause: err },
    );
  }
}

/**
 * Where the current turn's first message is: its box, the viewport's height, and the bottom of
 * the fixed replay head (what covers the top of the viewport).
 */
export async function currentTurnPlacement(page: Page): Promise<{
  turn: string | null;
  id: string | null;
  top: number;
  bottom: number;
  headBottom: number;
  viewport: number;
}> {
  return page.evaluate(() => {
    const current = document.querySelector('[data-testid=current-turn]') as HTMLElement | null;
    const first = current?.querySelector('[data-testid=message]') as HTMLElement | null;
    const box = first?.getBoundingClientRect();
    const head = document.querySelector('[data-testid=replay-head]')?.getBoundingClientRect();
    return {
      turn: current?.dataset.turn ?? null,
      id: first?.dataset.id ?? null,
      top: box?.top ?? -1,
      bottom: box?.bottom ?? -1,
      headBottom: head?.bottom ?? 0,
      viewport: window.innerHeight,
    };
  });
}

/**
 * The box of the first element `selector` names, measured in the page in one step once it is
 * there and drawn. A locator's box is two protocol calls (the element resolved, then measured):
 * a render between them that replaces the element (the turn's files, its usage or the project's
 * status arriving) leaves a detached node, whose box is null.
 */
export async function boxOf(
  page: Page,
  selector: string,
): Promise<{ x: number; y: number; width: number; height: number }> {
  const box = await page.waitForFunction((sel) => {
    const r = document.querySelector(sel)?.getBoundingClientRect();
    return r && (r.width > 0 || r.height > 0) ? { x: r.x, y: r.y, width: r.width, height: r.height } : null;
  }, selector);
  return (await box.jsonValue())!;
}

/** The accessibility check: axe-core injected into the page; the serious and critical violations. */
export async function axeViolations(
  page: Page,
): Promise<Array<{ id: string; impact: string | null; nodes: string[] }>> {
  await page.addScriptTag({ path: join(APP_DIR, 'node_modules/axe-core/axe.min.js') });
  return page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run(
            ctx: Document,
          ): Promise<{ violations: Array<{ id: string; impact: string | null; nodes: Array<{ target: unknown[] }> }> }>;
        };
      }
    ).axe;
    const r = await axe.run(document);
    return r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => JSON.stringify(n.target)) }));
  });
}
