// The replay app in Chromium against the ws-server: undoing the agent's edits of a turn from the
// turn itself (a reset at 1280 px, a revert after a commit of the user's and a refusal at 390 px,
// each outcome in the page's live region, native git judging the project), the sidebar staying in
// view after a 500-turn session opens and scrolls to its turn, and a compact top bar at 390 px
// before any session is open. Screenshots in test-output/undo/.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ECHO_NOTES_FILE, NOTES_SESSION } from 'ws-server';
import { axeViolations, boxOf, startHarness, waitText, waitTurn, type Harness } from './harness.js';
import { seedLongSession } from './long-session.js';

const LONG = 'long-500';
const TURNS = 500;

let hx: Harness;
let workdir = '';
let shot = 0;
const git = (...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=Ada', '-c', 'user.email=ada@example.org', ...args], {
    cwd: workdir,
    encoding: 'utf8',
    env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' },
  }).trim();

async function screenshot(p: Page, name: string): Promise<void> {
  shot++;
  await p.screenshot({ path: join(hx.shots, `${String(shot).padStart(2, '0')}-${name}.png`) });
}

/** Send `text` from the composer and wait for the turn it makes. */
async function send(p: Page, text: string, turn: string): Promise<void> {
  await p.fill('[data-testid=message-input]', text);
  await p.click('[data-testid=send]');
  await waitTurn(p, turn);
}

/** The outcome of the undo once it has one: its status, kind and text. */
async function outcome(p: Page): Promise<{ status: string; kind: string | null; text: string }> {
  await p.waitForFunction(
    () => {
      const el = document.querySelector<HTMLElement>('[data-testid=undo-outcome]');
      return el !== null && el.dataset.status !== 'running';
    },
    undefined,
    { timeout: 60_000 },
  );
  return p.$eval('[data-testid=undo-outcome]', (el) => ({
    status: (el as HTMLElement).dataset.status ?? '',
    kind: (el as HTMLElement).dataset.kind ?? null,
    text: (el as HTMLElement).innerText.trim(),
  }));
}

const noSideways = (p: Page) => p.evaluate(() => document.documentElement.scrollWidth);

beforeAll(async () => {
  hx = await startHarness('undo', async (store) => {
    await seedLongSession(store, LONG, TURNS);
    workdir = join(hx?.tmp ?? '', 'unused');
  });
  workdir = join(hx.tmp, 'work', 'notes');
  mkdirSync(workdir, { recursive: true });
  git('init', '-q', '-b', 'main');
  writeFileSync(join(workdir, 'README.md'), '# notes\n');
  git('add', 'README.md');
  git('commit', '-qm', 'first commit');
  const project = await hx.store.projects.createProject({ name: 'Notes', workdir, description: null });
  await hx.store.projects.addSessionToProject(project.id, NOTES_SESSION);
});

afterAll(async () => {
  await hx?.close();
});

describe('the layout', () => {
  it('at 1280 px the sidebar stays in view after a 500-turn session opens and the page scrolls to its turn', async () => {
    const { context, page } = await hx.open(1280, 800);
    try {
      await page.goto(`${hx.url}/#token=${hx.token}`);
      await page.click(`[data-testid=session][data-id=${LONG}]`);
      await waitTurn(page, `Turn ${TURNS} / ${TURNS}`);
      expect(await page.evaluate(() => window.scrollY)).toBeGreaterThan(0);
      const box = await boxOf(page, '[data-testid=sidebar]');
      expect(box.y).toBeLessThan(800);
      expect(box.y + box.height).toBeGreaterThan(0);
      expect(box.y).toBeGreaterThanOrEqual(-1);
      // What the newcomer looks for in it: the sessions, the open one marked, and the projects.
      const current = await boxOf(page, `[data-testid=session][data-id=${LONG}]`);
      expect(current.y).toBeGreaterThanOrEqual(0);
      expect(current.y + current.height).toBeLessThanOrEqual(800);
      expect(await page.getAttribute(`[data-testid=session][data-id=${LONG}]`, 'aria-current')).toBe('page');
      const project = await boxOf(page, '[data-testid=project]');
      expect(project.y + project.height).toBeLessThanOrEqual(800);
      await screenshot(page, 'long-500-sidebar-1280');
    } finally {
      await context.close();
    }
  });

  it('at 390 px the start screen’s top bar is compact before a session is open', async () => {
    const { context, page } = await hx.open(390, 844);
    try {
      await page.goto(`${hx.url}/#token=${hx.token}`);
      await page.waitForSelector('[data-testid=home]');
      const bar = await boxOf(page, '.topbar');
      expect(bar.height).toBeLessThanOrEqual(120);
      expect(bar.y).toBe(0);
      const menu = await boxOf(page, '[data-testid=menu]');
      expect(menu.y + menu.height).toBeLessThanOrEqual(bar.height);
      expect(await noSideways(page)).toBeLessThanOrEqual(390);
      await screenshot(page, 'start-390');
    } finally {
      await context.close();
    }
  });

  it('at 390 px the menu opened while the app still connects stays open, and lists the sessions once they come', async () => {
    const { context, page, errors } = await hx.open(390, 844);
    try {
      // The server's socket is held until the menu has been pressed: the press lands before the app
      // has a connection, the session list or a renderer, as it can on a slow phone or a busy machine.
      let release = () => undefined as void;
      const held = new Promise<void>((r) => {
        release = r;
      });
      await page.routeWebSocket(/\/ws/, async (ws) => {
        await held;
        ws.connectToServer();
      });
      await page.goto(`${hx.url}/#token=${hx.token}`);
      await page.click('[data-testid=menu]');
      expect(await page.getAttribute('[data-testid=menu]', 'aria-expanded')).toBe('true');
      release();
      await page.click(`[data-testid=session][data-id=${NOTES_SESSION}]`);
      await waitTurn(page, 'Turn 2 / 2');
      expect(await page.getAttribute('[data-testid=menu]', 'aria-expanded')).toBe('false');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('undo the agent’s edits of a turn', () => {
  it('at 1280 px: the control on the turn that made a project commit, operated by keyboard; the branch moves back', async () => {
    const { context, page, errors } = await hx.open(1280, 800);
    try {
      await page.goto(`${hx.url}/#token=${hx.token}`);
      await page.click(`[data-testid=session][data-id=${NOTES_SESSION}]`);
      await waitTurn(page, 'Turn 2 / 2');
      expect(await page.getByTestId('undo-turn').count()).toBe(0);
      const first = git('rev-parse', 'HEAD');
      await send(page, 'Note the lexer plan', 'Turn 3 / 3');
      const agent = git('rev-parse', 'HEAD');
      expect(git('log', '-1', '--format=%s')).toBe(`[agent ${NOTES_SESSION}] turn 3: Note the lexer plan`);
      await page.waitForSelector('[data-testid=undo-turn]');
      expect(await page.getAttribute('[data-testid=turn-agent-commit]', 'data-sha')).toBe(agent);
      expect(await page.innerText('[data-testid=undo-turn]')).toBe('Undo the agent’s edits of this turn');
      expect(await axeViolations(page)).toEqual([]);
      await screenshot(page, 'undo-control-1280');

      await page.focus('[data-testid=undo-turn]');
      await page.keyboard.press('Enter');
      const o = await outcome(page);
      expect(o).toEqual({
        status: 'done',
        kind: 'reset',
        text: `Undone: main moved back over the agent's commit ${agent.slice(0, 12)} (turn 3); 1 file restored.`,
      });
      // The outcome is the focused live region; the commit now reads as undone, with no control.
      expect(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.testid)).toBe(
        'undo-outcome',
      );
      await waitText(page, 'turn-agent-commit', 'undone: the branch moved back over it');
      expect(await page.getByTestId('undo-turn').count()).toBe(0);
      // The replay head no longer announces the agent commit that was taken back.
      expect(await page.getByTestId('project-commit').count()).toBe(0);
      expect(git('rev-parse', 'HEAD')).toBe(first);
      expect(existsSync(join(workdir, ECHO_NOTES_FILE))).toBe(false);
      expect(git('status', '--porcelain', '--untracked-files=all')).toBe('');
      expect(git('fsck', '--strict')).toBe('');
      expect(await axeViolations(page)).toEqual([]);
      await screenshot(page, 'undo-reset-1280');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('at 390 px: a revert commit after a commit of the user’s, then a refusal that names the user’s uncommitted file', async () => {
    const { context, page, errors } = await hx.open(390, 844);
    try {
      await page.goto(`${hx.url}/#token=${hx.token}`);
      await page.click('[data-testid=menu]');
      await page.click(`[data-testid=session][data-id=${NOTES_SESSION}]`);
      await waitTurn(page, 'Turn 3 / 3');
      await send(page, 'Note the parser plan', 'Turn 4 / 4');
      const agent = git('rev-parse', 'HEAD');
      writeFileSync(join(workdir, 'mine.md'), 'the user’s\n');
      git('add', 'mine.md');
      git('commit', '-qm', 'the user builds on it');
      const mine = git('rev-parse', 'HEAD');
      await page.click('[data-testid=undo-turn]');
      const o = await outcome(page);
      const revert = git('rev-parse', 'HEAD');
      expect(o).toEqual({
        status: 'done',
        kind: 'reverted',
        text: `Undone: the new commit ${revert.slice(0, 12)} on main takes back the agent's commit ${agent.slice(0, 12)} (turn 4); 1 file restored.`,
      });
      expect(git('log', '-1', '--format=%P%n%s')).toBe(
        `${mine}\n[agent ${NOTES_SESSION}] revert turn 4: Note the parser plan`,
      );
      expect(readFileSync(join(workdir, 'mine.md'), 'utf8')).toBe('the user’s\n');
      await waitText(page, 'turn-agent-commit', `undone by ${revert.slice(0, 7)}`);
      expect(await noSideways(page)).toBeLessThanOrEqual(390);
      await screenshot(page, 'undo-reverted-390');

      await send(page, 'Note the tests plan', 'Turn 5 / 5');
      await page.waitForSelector('[data-testid=undo-turn]');
      const head = git('rev-parse', 'HEAD');
      writeFileSync(join(workdir, ECHO_NOTES_FILE), 'the user is typing\n');
      await page.click('[data-testid=undo-turn]');
      const refused = await outcome(page);
      expect(refused.status).toBe('refused');
      expect(refused.text).toContain('Not undone. It cannot be done safely right now (the reason is below).');
      expect(await page.innerText('[data-testid=undo-details]')).toBe(
        `REVERT_REFUSED: you have uncommitted changes on ${ECHO_NOTES_FILE}, which the undo would overwrite`,
      );
      expect(git('rev-parse', 'HEAD')).toBe(head);
      expect(readFileSync(join(workdir, ECHO_NOTES_FILE), 'utf8')).toBe('the user is typing\n');
      // The control stays: once the file is clean again the undo can run.
      expect(await page.getByTestId('undo-turn').count()).toBe(1);
      expect(await noSideways(page)).toBeLessThanOrEqual(390);
      expect(await axeViolations(page)).toEqual([]);
      await screenshot(page, 'undo-refused-390');
      git('checkout', '--', ECHO_NOTES_FILE);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
