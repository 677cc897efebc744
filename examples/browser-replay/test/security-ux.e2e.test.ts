// The replay app's guards, in Chromium at 1280 and 390 px: "+ New Project" asks before it moves
// the open session out of its project and before it runs git init; Escape closes the form and the
// narrow drawer; focus goes into the form when it opens; a long fork name never scrolls the page
// sideways; the project indicator is on screen when a session opens.
import type { SqlStore } from '@entity-git/sqlite';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SESSION } from 'ws-server';
import { boxOf, startHarness, waitText, waitTurn, type Harness } from './harness.js';

const LONG_FORK = 'fork-a-very-long-node-id-that-someone-gave-their-message-without-any-break-in-it-0123456789';
const LONG_SESSION = 'long-fork-names';

async function seedLongFork(store: SqlStore): Promise<void> {
  const w = store.writer;
  await w.createSession({ id: LONG_SESSION, title: 'A session with a long fork name', created_at: 1779500000 });
  const at = (n: number) => 1779500000 + n;
  await w.appendNode({ id: 'u1', session_id: LONG_SESSION, role: 'user', content: 'first', created_at: at(1) });
  await w.appendNode({
    id: 'a1',
    session_id: LONG_SESSION,
    role: 'assistant',
    content: 'one',
    predecessor: 'u1',
    created_at: at(2),
  });
  await w.appendNode({
    id: 'u2',
    session_id: LONG_SESSION,
    role: 'user',
    content: 'second',
    predecessor: 'a1',
    created_at: at(3),
  });
  await w.appendNode({
    id: 'a2',
    session_id: LONG_SESSION,
    role: 'assistant',
    content: 'two',
    predecessor: 'u2',
    created_at: at(4),
  });
  const fork = LONG_FORK.slice('fork-'.length);
  await w.appendNode({
    id: fork,
    session_id: LONG_SESSION,
    role: 'user',
    content: `again:${'x'.repeat(300)}`,
    predecessor: 'a1',
    created_at: at(5),
  });
  await w.appendNode({
    id: `${fork}-a`,
    session_id: LONG_SESSION,
    role: 'assistant',
    content: 'again two',
    predecessor: fork,
    created_at: at(6),
  });
}

let hx: Harness;
let work = '';
beforeAll(async () => {
  hx = await startHarness('security-ux', seedLongFork);
  work = join(hx.tmp, 'work');
  mkdirSync(join(work, 'bound'), { recursive: true });
  execFileSync('git', ['init', '-q', join(work, 'bound')]);
  const p = await hx.store.projects.createProject({ name: 'Bound', workdir: join(work, 'bound'), description: null });
  await hx.store.projects.addSessionToProject(p.id, DEMO_SESSION);
}, 240_000);
afterAll(async () => hx?.close());

async function openSession(page: Page, id: string, turn: string): Promise<void> {
  await page.goto(`${hx.url}/#token=${hx.token}`);
  await page.goto(`${hx.url}/#/s/${id}`);
  await waitTurn(page, turn);
}

const focusedName = (page: Page) =>
  page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.name ?? null);

for (const width of [1280, 390]) {
  describe(`at ${width} px`, () => {
    it('the project indicator is on screen when a session opens', async () => {
      const { context, page } = await hx.open(width, 800);
      await openSession(page, DEMO_SESSION, 'Turn 5 / 5');
      // The project row comes with the session's summary, read beside the turns.
      const box = await boxOf(page, '[data-testid=project-indicator]');
      expect(box.y).toBeGreaterThanOrEqual(0);
      expect(box.y + box.height).toBeLessThanOrEqual(800);
      expect(await page.getByTestId('project-indicator').innerText()).toContain('Bound');
      await context.close();
    });

    it('a long fork name never scrolls the page sideways', async () => {
      const { context, page } = await hx.open(width, 800);
      await openSession(page, LONG_SESSION, 'Turn 2 / 2');
      // The page, and main (the scroller below the top bar at 390 px), are no wider than the window.
      const widths = await page.evaluate(() => {
        const main = document.querySelector('main')!;
        return {
          page: document.documentElement.scrollWidth <= window.innerWidth,
          main: main.scrollWidth <= main.clientWidth,
          scrollX: window.scrollX,
        };
      });
      expect(widths).toEqual({ page: true, main: true, scrollX: 0 });
      await context.close();
    });

    it('+ New Project: focus goes into the form, Escape closes it (and the drawer)', async () => {
      const { context, page } = await hx.open(width, 800);
      await openSession(page, DEMO_SESSION, 'Turn 5 / 5');
      if (width < 760) await page.getByTestId('menu').click();
      await page.getByTestId('new-project').click();
      expect(await focusedName(page)).toBe('workdir');
      await page.keyboard.press('Escape');
      expect(await page.getByTestId('new-project-form').count()).toBe(0);
      if (width < 760) {
        expect(await page.getByTestId('menu').getAttribute('aria-expanded')).toBe('true');
        await page.keyboard.press('Escape');
        expect(await page.getByTestId('menu').getAttribute('aria-expanded')).toBe('false');
      }
      await context.close();
    });
  });
}

describe('the page drawn again while the user types', () => {
  it('a field of the new project form keeps focus and caret', async () => {
    const { context, page } = await hx.open(1280, 800);
    await openSession(page, DEMO_SESSION, 'Turn 5 / 5');
    await page.getByTestId('new-project').click();
    await page.keyboard.type('/tmp/half-typed');
    for (let k = 0; k < 3; k++) await page.keyboard.press('ArrowLeft');
    // What the session's later reads (its project's status, the turn's files) do: the page drawn anew.
    const drawn = page.evaluate(
      () =>
        new Promise<void>((done) =>
          document.addEventListener('replay:rendered', () => done(), { capture: true, once: true }),
        ),
    );
    await page.evaluate(() => window.dispatchEvent(new HashChangeEvent('hashchange')));
    await drawn;
    const field = await page.evaluate(() => {
      const a = document.activeElement as HTMLInputElement;
      return { name: a.name, value: a.value, caret: a.selectionStart };
    });
    expect(field).toEqual({ name: 'workdir', value: '/tmp/half-typed', caret: 12 });
    await context.close();
  });
});

describe('+ New Project asks first', () => {
  it('before moving the open session out of its project, and before git init in a plain folder', async () => {
    const { context, page } = await hx.open(1280, 800);
    await openSession(page, DEMO_SESSION, 'Turn 5 / 5');
    const plain = join(work, 'plain');
    mkdirSync(plain);
    await page.getByTestId('new-project').click();
    await page.fill('input[name=workdir]', plain);
    await page.getByTestId('create-project').click();
    await waitText(page, 'confirm-move', 'Bound');
    // Not moved, nothing created yet.
    const before = async () => (await hx.store.projects.listProjects()).map((p) => [p.name, p.sessions]);
    expect(await before()).toEqual([['Bound', [DEMO_SESSION]]]);
    await page.getByTestId('confirm-yes').click();
    await waitText(page, 'confirm-init', realpathSync(plain));
    expect(existsSync(join(plain, '.git'))).toBe(false);
    expect(await before()).toEqual([['Bound', [DEMO_SESSION]]]);
    await page.getByTestId('confirm-yes').click();
    await waitText(page, 'notice', 'git init in');
    expect(existsSync(join(plain, '.git'))).toBe(true);
    const projects = await hx.store.projects.listProjects();
    expect(projects.map((p) => [p.name, p.sessions])).toEqual([
      ['Bound', []],
      ['plain', [DEMO_SESSION]],
    ]);
    await context.close();
  });
});
