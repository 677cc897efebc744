// End to end in real Chromium, the harness of e2e.test.ts: the session row changes while the
// session lives — renamed (by the application, in its database), added to a project (the New
// Project flow), metadata edited — and a message is sent; "Save for offline" then rebuilds the
// session in IndexedDB from the rows and finds every branch's commit id equal to the server's
// (issue 19: commit ids are a pure function of the DAG, whatever the row went through).
import { openSqlite, type SqlStore } from '@entity-git/sqlite';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, echoAgent, NOTES_SESSION, seedDemo, type EntityGitServer } from 'ws-server';

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
// Directories of its own: vitest may run this file beside e2e.test.ts.
const SHOTS = join(REPO, 'test-output/e2e-row-edits');
const BUILT = join(REPO, 'test-output/browser-replay-app-row-edits');
const TOKEN = 'e2e-token-row-edits-1a2b3c';

let tmp = '';
let store: SqlStore;
let server: EntityGitServer;
let browser: Browser;
let page: Page;
let shot = 0;
const consoleErrors: string[] = [];

async function screenshot(name: string): Promise<void> {
  shot++;
  await page.screenshot({ path: join(SHOTS, `${String(shot).padStart(2, '0')}-${name}.png`), fullPage: true });
}

const byTestId = (id: string) => page.getByTestId(id);
const textOf = async (id: string) => (await byTestId(id).first().innerText()).trim();

async function waitTurn(text: string): Promise<void> {
  await page.waitForFunction(
    (t) =>
      document.querySelector('main')?.dataset.loading === 'false' &&
      document.querySelector('[data-testid=turn]')?.textContent === t,
    text,
    { timeout: 30_000 },
  );
}

async function waitText(testId: string, pattern: string): Promise<void> {
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
  tmp = mkdtempSync(join(tmpdir(), 'eg-e2e-rows-'));
  store = await openSqlite({ file: join(tmp, 'dag.db') });
  await seedDemo(store);
  server = await createServer({
    db: store,
    root: join(tmp, 'sessions'),
    port: 0,
    token: TOKEN,
    staticDir: BUILT,
    agent: echoAgent,
    projectLocks: join(tmp, 'locks'),
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  page = await (await browser.newContext({ viewport: { width: 1320, height: 900 } })).newPage();
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(e.message));
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await store?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('browser-replay: a session whose row changed', () => {
  it("renamed, added to a project, a message sent: saved for offline, every branch's id equals the server's", async () => {
    await page.goto(`${server.url}/#token=${TOKEN}`);
    await page.waitForSelector('[data-testid=session]');
    await page.click(`[data-testid=session][data-id=${NOTES_SESSION}]`);
    await waitTurn('Turn 2 / 2');
    const before = await server.mirror.branches(NOTES_SESSION);

    // The application renames the session and edits its metadata, in its own database.
    await store.db
      .updateTable('sessions')
      .set({ title: 'Lexer notes, renamed', metadata: JSON.stringify({ pinned: true }) })
      .where('id', '=', NOTES_SESSION)
      .execute();

    // The user adds the session to a new project.
    const workdir = join(tmp, 'work', 'notes-project');
    mkdirSync(workdir, { recursive: true });
    await page.click('[data-testid=new-project]');
    await page.fill('input[name=workdir]', '');
    await page.type('input[name=workdir]', workdir);
    await page.fill('input[name=name]', 'Notes Project');
    expect(await page.isChecked('input[name=with-session]')).toBe(true);
    await page.click('[data-testid=create-project]');
    // The folder is in no repository: git init only once the user says yes.
    await page.waitForSelector('[data-testid=confirm-init]');
    await page.click('[data-testid=confirm-yes]');
    await waitText('project-indicator', 'Notes Project');
    await screenshot('project-joined');

    // …and sends a message.
    await page.click(`[data-testid=session][data-id=${NOTES_SESSION}]`);
    await waitTurn('Turn 2 / 2');
    await page.fill('[data-testid=message-input]', 'One more thing about the lexer');
    await page.click('[data-testid=send]');
    await waitTurn('Turn 3 / 3');
    const after = await server.mirror.branches(NOTES_SESSION);
    // The commits made before the row changed are still the branch's history.
    const mainLog = (await server.mirror.log(NOTES_SESSION, { branch: 'main' })).map((c) => c.sha);
    expect(mainLog).toHaveLength(3);
    expect(mainLog[1]).toBe(before.find((b) => b.name === 'main')!.commit);

    await page.waitForSelector('[data-testid=save-offline]');
    await page.click('[data-testid=save-offline]');
    await waitText('save-summary', 'Saved for offline');
    expect(await textOf('save-summary')).toContain("the commit ids rebuilt in this browser equal the server's ✓");
    const rows = await page.$$eval('[data-testid=save-row]', (trs) =>
      trs.map((tr) => {
        const d = (tr as HTMLElement).dataset;
        return { name: d.branch, server: d.server, browser: d.browser, text: tr.textContent };
      }),
    );
    expect(rows.map((r) => [r.name, r.server, r.browser])).toEqual(after.map((b) => [b.name, b.commit, b.commit]));
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.text?.endsWith('✓ equal'))).toBe(true);
    await screenshot('saved-equal');
    expect(consoleErrors).toEqual([]);
  }, 240_000);
});
