// The replay app reading a long timeline in pages (history-pages.ts), in real Chromium against the
// ws-server: a 250-turn session opens with its turn count and the newest page only, a link to an
// old turn reads the pages it needs, and the timeline's rows, prev / next and the turn shown are
// those of the whole timeline.
import type { Page } from 'playwright';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE } from '../src/history-pages.js';
import { currentTurnPlacement, startHarness, waitTurn, type Harness } from './harness.js';
import { seedLongSession } from './long-session.js';

const ID = 'paged-250';
const TURNS = 250;

let hx: Harness;
let page: Page;
let errors: string[] = [];
/** `git_history` requests the page sent, and the replies it got, in order. */
const asked: Array<Record<string, unknown>> = [];
const answered = new Map<number, { total?: number; offset?: number; commits: unknown[] }>();
const historyIds = new Map<number, Record<string, unknown>>();

beforeAll(async () => {
  hx = await startHarness('history-pages', (store) => seedLongSession(store, ID, TURNS));
  ({ page, errors } = await hx.open(1280, 800));
  page.on('websocket', (ws) => {
    ws.on('framesent', (f) => {
      const m = JSON.parse(String(f.payload));
      if (m.action === 'git_history' && m.params.session_id === ID) {
        asked.push(m.params);
        historyIds.set(m.id, m.params);
      }
    });
    ws.on('framereceived', (f) => {
      const m = JSON.parse(String(f.payload));
      if (historyIds.has(m.id) && m.ok) answered.set(m.id, m.result);
    });
  });
});

afterAll(async () => {
  await hx?.close();
});

/** The turn shown: its indicator, and its first message (the turn's question) on screen under the head. */
async function expectTurn(turn: number): Promise<void> {
  await waitTurn(page, `Turn ${turn} / ${TURNS}`);
  const at = await currentTurnPlacement(page);
  expect(at.turn).toBe(String(turn));
  expect(at.id).toBe(`${ID}-u${turn}`);
  expect(at.top).toBeGreaterThanOrEqual(at.headBottom - 1);
  expect(at.bottom).toBeLessThanOrEqual(at.viewport);
}

/** The timeline's rows drawn now: each the commit of its place in the whole list. */
async function expectRowsInPlace(): Promise<number> {
  const rows = await page.$$eval('[data-testid=commit]', (as) =>
    as.map((a) => ({
      subject: a.querySelector('.subject')!.textContent!,
      pos: Number(a.parentElement!.getAttribute('aria-posinset')),
      size: Number(a.parentElement!.getAttribute('aria-setsize')),
    })),
  );
  for (const r of rows) {
    expect(r.size).toBe(TURNS);
    expect(r.subject).toMatch(new RegExp(`^turn ${r.pos}: `));
  }
  return rows.length;
}

describe('a long timeline read in pages', () => {
  it('opens with the turn count and the newest page: turn 250 of 250, its rows in place', async () => {
    await page.goto(`${hx.url}/#token=${hx.token}`);
    await page.click(`[data-testid=session][data-id=${ID}]`);
    await expectTurn(TURNS);
    expect(asked[0]).toEqual({ session_id: ID, offset: 0, limit: PAGE });
    const [firstId] = [...historyIds.keys()];
    const first = answered.get(firstId!)!;
    expect(first.total).toBe(TURNS);
    expect(first.offset).toBe(0);
    expect(first.commits).toHaveLength(PAGE);
    expect(await page.getByTestId('timeline-heading').innerText()).toBe(`Timeline · main · ${TURNS} commits`);
    expect(await expectRowsInPlace()).toBeGreaterThan(0);
    // Every later read is a page too: the whole timeline is never asked for at once.
    for (const p of asked) expect(typeof p.offset).toBe('number');
  });

  it('a link to an old turn shows it, with prev and next and its timeline entry, from the pages read', async () => {
    const shas = (await hx.server.mirror.log(ID)).map((c) => c.sha).reverse();
    await page.evaluate((h) => {
      location.hash = h;
    }, `#/s/${ID}/c/${shas[29]}/main`);
    await expectTurn(30);
    const current = page.locator('[data-testid=commit][aria-current=step]');
    await expect.poll(() => current.locator('.subject').innerText()).toMatch(/^turn 30: /);
    await page.click('[data-testid=prev]');
    await expectTurn(29);
    await page.click('[data-testid=next]');
    await page.click('[data-testid=next]');
    await expectTurn(31);
    await expectRowsInPlace();
  });

  it('the timeline scrolled anywhere draws the rows of that place, read as it goes', async () => {
    for (const k of [1, 120, 249, 200]) {
      await page.$eval(
        '[data-testid=timeline]',
        (l, top) => {
          l.scrollTop = top;
        },
        (k - 1) * 24,
      );
      const entry = page.locator('[data-testid=commit]', { hasText: `turn ${k}: ` });
      await entry.waitFor();
      await expectRowsInPlace();
    }
    // Clicked once the list has drawn its scroll (timelineEntry in replay-ux-helpers.ts says why).
    const entry = page.locator('[data-testid=commit]', { hasText: 'turn 200: ' });
    await entry.scrollIntoViewIfNeeded();
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    await entry.click();
    await expectTurn(200);
    for (const p of asked) expect(typeof p.offset).toBe('number');
    expect(errors).toEqual([]);
  });

  it('scrolling the timeline never takes a row that stays in view out of the page (a click on it would be lost)', async () => {
    const { page: p } = await hx.open(1280, 800);
    await p.goto(`${hx.url}/#token=${hx.token}`);
    await p.click(`[data-testid=session][data-id=${ID}]`);
    await waitTurn(p, `Turn ${TURNS} / ${TURNS}`);
    // Every row the list loses from here on, kept to look at after the scroll.
    await p.$eval('[data-testid=timeline]', (list) => {
      const removed: Element[] = [];
      (window as unknown as { removedRows: Element[] }).removedRows = removed;
      new MutationObserver((records) => {
        for (const r of records) for (const n of r.removedNodes) if (n instanceof Element) removed.push(n);
      }).observe(list, { childList: true });
    });
    for (const k of [200, 190, 150]) {
      await p.$eval(
        '[data-testid=timeline]',
        (l, top) => {
          l.scrollTop = top;
        },
        (k - 1) * 24 - 300,
      );
      await p.locator('[data-testid=commit]', { hasText: `turn ${k}: ` }).waitFor();
      await p.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    }
    const { removed, back } = await p.evaluate(() => {
      const rows = (window as unknown as { removedRows: Element[] }).removedRows.filter(
        (e) => e.tagName === 'LI' && !e.classList.contains('spacer') && !e.classList.contains('pending'),
      );
      return { removed: rows.length, back: rows.filter((e) => e.isConnected).length };
    });
    // Rows left the window (the observer saw them go), and none of those that stayed went and came back.
    expect(removed).toBeGreaterThan(0);
    expect(back).toBe(0);
    await p.close();
  });

  it('a render that leaves the current turn as it was leaves the timeline where the user scrolled it', async () => {
    const { page: p } = await hx.open(1280, 800);
    await p.goto(`${hx.url}/#token=${hx.token}`);
    await p.click(`[data-testid=session][data-id=${ID}]`);
    await waitTurn(p, `Turn ${TURNS} / ${TURNS}`);
    // Scrolled far from the current turn (the newest, the list's last row), and in the same task,
    // before the scroll's event, a render (a fold of the earlier turns): the list stays there.
    const top = 149 * 24 - 300;
    await p.$eval(
      '[data-testid=timeline]',
      (l, y) => {
        l.scrollTop = y;
        document.querySelector<HTMLElement>('[data-testid=fold-earlier]')!.click();
      },
      top,
    );
    await p.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    expect(await p.$eval('[data-testid=timeline]', (l) => l.scrollTop)).toBe(top);
    await p.locator('[data-testid=commit]', { hasText: 'turn 150: ' }).waitFor();
    // Another render after the scroll's event: still there, and the turn shown is still the newest.
    await p.click('[data-testid=fold-earlier]');
    await p.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    expect(await p.$eval('[data-testid=timeline]', (l) => l.scrollTop)).toBe(top);
    await waitTurn(p, `Turn ${TURNS} / ${TURNS}`);
    // A step changes the current turn: the list brings it into view.
    await p.click('[data-testid=prev]');
    await waitTurn(p, `Turn ${TURNS - 1} / ${TURNS}`);
    const at = await p.$eval('[data-testid=timeline]', (l) => ({ top: l.scrollTop, h: l.clientHeight }));
    expect((TURNS - 2) * 24).toBeGreaterThanOrEqual(at.top);
    expect((TURNS - 1) * 24).toBeLessThanOrEqual(at.top + at.h);
    await p.close();
  });
});
