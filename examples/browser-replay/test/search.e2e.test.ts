// The search box of the replay app, in real Chromium against the ws-server over the demo DAG: at
// 1280 and 390 px the server's index finds every message holding the words (a message on two
// branches once), a hit opens its turn at its commit; then, the server stopped, the copy saved in
// this browser is searched in the page (offline-search.ts) with the same commits.
import type { Page } from 'playwright';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SESSION } from 'ws-server';
import { boxOf, startHarness, waitText, waitTurn, type Harness } from './harness.js';

let hx: Harness;

beforeAll(async () => {
  hx = await startHarness('search');
});

afterAll(async () => {
  await hx?.close();
});

/** Hits as the page lists them: node, and the line under the title. */
async function hits(page: Page): Promise<{ node: string; session: string; commit: string; meta: string }[]> {
  await page.waitForFunction(() => document.querySelector('main')?.dataset.loading === 'false', null, {
    timeout: 30_000,
  });
  await page.waitForSelector('[data-testid=search-count]');
  return page.$$eval('[data-testid=search-hit]', (as) =>
    as.map((a) => ({
      node: (a as HTMLElement).dataset.node!,
      session: (a as HTMLElement).dataset.session!,
      commit: (a as HTMLElement).dataset.commit!,
      meta: a.querySelector('.hit-meta')!.textContent!,
    })),
  );
}

async function searchFor(page: Page, query: string, every: boolean): Promise<void> {
  await page.fill('[data-testid=search-input]', query);
  if ((await page.isChecked('[data-testid=search-all]')) !== every) await page.click('[data-testid=search-all]');
  await page.press('[data-testid=search-input]', 'Enter');
  await page.waitForFunction((q) => location.hash.startsWith(`#/search/${encodeURIComponent(q)}`), query);
}

const TODO_ON_HEAD = ['d-g1', 'd-g2', 'd-u2', 'd-u3', 'n-u2'];
const mainCommit = async (turn: number) => {
  const log = await hx.server.mirror.log(DEMO_SESSION, { branch: 'main' });
  return log[log.length - turn]!.sha;
};

describe('the search box', () => {
  it('at 1280 px: finds the messages of every session, once each, and a hit opens its turn at its commit', async () => {
    const { page, errors } = await hx.open(1280, 800);
    await page.goto(`${hx.url}/#token=${hx.token}`);
    await page.waitForSelector('[data-testid=session]');
    await searchFor(page, 'todo', false);
    const onHead = await hits(page);
    expect(onHead.map((x) => x.node).sort()).toEqual(TODO_ON_HEAD);
    expect(await page.innerText('[data-testid=search-count]')).toBe('5 messages on the server');
    const g1 = onHead.find((x) => x.node === 'd-g1')!;
    expect(g1.commit).toBe(await mainCommit(2));
    expect(g1.meta).toBe(`Turn 2 · main · tool · ${g1.commit.slice(0, 7)}`);
    expect(await page.innerText('[data-node=d-g1] mark')).toBe('TODO');
    await page.screenshot({ path: `${hx.shots}/1280-hits.png`, fullPage: true });

    // Every branch: d-u3 is on main and on the retry, and is one hit.
    await searchFor(page, 'todo', true);
    const every = await hits(page);
    expect(every.map((x) => x.node).sort()).toEqual(TODO_ON_HEAD);
    expect(every.find((x) => x.node === 'd-u3')!.meta).toMatch(
      /^Turn 3 · main \(also retry-d-a3r\) · user · [0-9a-f]{7}$/,
    );

    await page.click('[data-node=d-g1]');
    await waitTurn(page, 'Turn 2 / 5');
    expect(await page.evaluate(() => location.hash)).toBe(`#/s/${DEMO_SESSION}/c/${g1.commit}/main`);
    expect(await page.innerText('[aria-current=step]')).toContain('parser.ts:3: // TODO handle empty input');
    expect(errors).toEqual([]);
  });

  it('at 390 px: the box is in the drawer, the hits fit the width, a hit opens its turn', async () => {
    const { page, errors, context } = await hx.open(390, 844);
    await page.goto(`${hx.url}/#token=${hx.token}`);
    await page.waitForSelector('[data-testid=session]', { state: 'attached' });
    await page.click('[data-testid=menu]');
    await searchFor(page, 'unicode', false);
    const found = await hits(page);
    expect(found.map((x) => `${x.session}/${x.node}`).sort()).toEqual([`${DEMO_SESSION}/d-g2`, 'lexer-notes/n-u2']);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    const box = await boxOf(page, '[data-node=n-u2]');
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(390);
    await page.screenshot({ path: `${hx.shots}/390-hits.png`, fullPage: true });
    await page.click('[data-node=n-u2]');
    await waitTurn(page, 'Turn 2 / 2');
    expect(await page.innerText('[aria-current=step]')).toContain('And the unicode TODO?');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('offline: the copy saved in this browser is searched in the page, with the same commits', async () => {
    const { page, errors } = await hx.open(1280, 800);
    await page.goto(`${hx.url}/#token=${hx.token}`);
    await page.waitForSelector('[data-testid=session]');
    await page.goto(`${hx.url}/#/s/${DEMO_SESSION}`);
    await page.waitForSelector('[data-testid=save-offline]');
    await page.click('[data-testid=save-offline]');
    await waitText(page, 'save-summary', 'Saved for offline');
    await waitText(page, 'app-cache', 'app cached for offline use');
    await searchFor(page, 'todo', true);
    const online = (await hits(page)).filter((x) => x.session === DEMO_SESSION);
    await hx.server.close();
    await page.reload();
    await waitText(page, 'mode', 'offline');
    await searchFor(page, 'todo', true);
    const offline = await hits(page);
    expect(await page.innerText('[data-testid=search-count]')).toBe(
      '4 messages in the copies saved in this browser, every branch',
    );
    // Only the saved session, and each hit at the very commit the server named.
    expect(offline.map((x) => `${x.node} ${x.commit} ${x.meta}`).sort()).toEqual(
      online.map((x) => `${x.node} ${x.commit} ${x.meta}`).sort(),
    );
    await page.screenshot({ path: `${hx.shots}/offline-hits.png`, fullPage: true });
    await page.click('[data-node=d-u3]');
    await waitTurn(page, 'Turn 3 / 5');
    expect(await page.innerText('[aria-current=step]')).toContain('Fix the TODO in parser.ts');
    expect(errors.filter((e) => !/WebSocket|ERR_CONNECTION_REFUSED|Failed to load resource/.test(e))).toEqual([]);
  });
});
