// What the e2e story (e2e.test.ts) runs on: the app built with vite's build(), the ws-server over
// the demo DAG on 127.0.0.1, one Chromium page driven with playwright, and the helpers that read
// the page and leave a screenshot per step in test-output/e2e/.
import { createNodeProjectGit, ShadowProjectGit } from '@entity-git/project/node';
import { openSqlite, type SqlStore } from '@entity-git/sqlite';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright';
import { build } from 'vite';
import { afterAll, beforeAll } from 'vitest';
import { createServer, echoAgent, seedDemo, type EntityGitServer } from 'ws-server';

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
const APP_DIR = resolve(import.meta.dirname, '..');
const REPO = resolve(APP_DIR, '../..');
const SHOTS = join(REPO, 'test-output/e2e');
const BUILT = join(REPO, 'test-output/browser-replay-app');
export const TOKEN = 'e2e-token-9f8e7d6c5b4a3f2e1d0c';
/** DESIGN.md §4's warning, word for word. */
export const WARNING = "you have uncommitted changes, the agent's edits won't be auto-committed for now";

export let tmp = '';
export let store: SqlStore;
export let server: EntityGitServer;
let browser: Browser;
export let page: Page;
export let url = '';
let shot = 0;
export const consoleErrors: string[] = [];

export async function screenshot(name: string): Promise<void> {
  shot++;
  await page.screenshot({ path: join(SHOTS, `${String(shot).padStart(2, '0')}-${name}.png`), fullPage: true });
}

export const byTestId = (id: string) => page.getByTestId(id);
export const textOf = async (id: string) => (await byTestId(id).first().innerText()).trim();
export const count = (id: string) => byTestId(id).count();

/** Wait until the page is idle and the turn indicator reads `text`. */
export async function waitTurn(text: string): Promise<void> {
  await page.waitForFunction(
    (t) =>
      document.querySelector('main')?.dataset.loading === 'false' &&
      document.querySelector('[data-testid=turn]')?.textContent === t,
    text,
    { timeout: 30_000 },
  );
}

export async function waitText(testId: string, pattern: string): Promise<void> {
  try {
    await page.waitForFunction(
      ([id, p]) =>
        [...document.querySelectorAll(`[data-testid="${id}"]`)].some((el) => (el.textContent ?? '').includes(p!)),
      [testId, pattern] as const,
      { timeout: 30_000 },
    );
  } catch (err) {
    throw new Error(
      `no [data-testid=${testId}] reads ${JSON.stringify(pattern)}; the page reads:\n${await page.innerText('body').catch(() => '?')}\nconsole errors: ${consoleErrors.join('\n')}`,
      { cause: err },
    );
  }
}

export async function messages(): Promise<Array<{ role: string; text: string }>> {
  return page.$$eval('[data-testid=message]', (els) =>
    els.map((el) => ({
      role: (el as HTMLElement).dataset.role ?? '',
      text: el.querySelector('.content')?.textContent ?? '',
    })),
  );
}

/** Builds the app, starts the server and the browser before the story, and stops them after it: called once, at the top of the file. */
export function useE2eApp(): void {
  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(`${CHROMIUM} is missing: run \`node scripts/setup.mjs\` (it installs Debian's chromium)`);
    rmSync(SHOTS, { recursive: true, force: true });
    mkdirSync(SHOTS, { recursive: true });
    await build({
      root: APP_DIR,
      configFile: join(APP_DIR, 'vite.config.ts'),
      logLevel: 'warn',
      build: { outDir: BUILT, emptyOutDir: true },
    });

    tmp = mkdtempSync(join(tmpdir(), 'eg-e2e-'));
    store = await openSqlite({ file: join(tmp, 'dag.db') });
    await seedDemo(store);
    server = await createServer({
      db: store,
      root: join(tmp, 'sessions'),
      port: 0,
      token: TOKEN,
      staticDir: BUILT,
      agent: echoAgent,
      // These suites test the auto-commit (agent commits, the warning, the undo): projects are in
      // auto-commit mode (the server's default is shadow mode).
      projectGit: new ShadowProjectGit({
        root: join(tmp, 'sessions', '.shadow'),
        defaultMode: 'auto-commit',
        autoCommit: createNodeProjectGit({ dir: join(tmp, 'locks') }),
      }),
    });
    url = server.url;

    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
    const context = await browser.newContext({ viewport: { width: 1320, height: 900 } });
    // A busy 2-core machine (the whole suite beside Chromium) can take past playwright's 30 s.
    context.setDefaultTimeout(90_000);
    page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(e.message));
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await store?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });
}
