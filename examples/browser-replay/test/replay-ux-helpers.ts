// What the replay-ux story (replay-ux.test.ts) runs on: the harness with an 80-turn session beside
// the demo ones, one page at 1280×800, and the helpers that check where the current turn and its
// timeline entry are on screen.
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright';
import { afterAll, beforeAll, expect } from 'vitest';
import { currentTurnPlacement, startHarness, type Harness } from './harness.js';
import { seedLongSession } from './long-session.js';

export const LONG = 'long-80';
export const TURNS = 80;
export const WARNING = "you have uncommitted changes, the agent's edits won't be auto-committed for now";

export let hx: Harness;
export let context: BrowserContext;
export let page: Page;
export let errors: string[] = [];
let shot = 0;

export async function screenshot(p: Page, name: string): Promise<void> {
  shot++;
  await p.screenshot({ path: join(hx.shots, `${String(shot).padStart(2, '0')}-${name}.png`) });
}

export const testId = (p: Page, id: string) => p.getByTestId(id);
export const textOf = async (p: Page, id: string) => (await testId(p, id).first().innerText()).trim();

/** The current turn's first message is in the viewport, below the fixed replay head, and is that turn's user message. */
export async function expectTurnOnScreen(p: Page, turn: number): Promise<void> {
  const at = await currentTurnPlacement(p);
  expect(at.turn).toBe(String(turn));
  expect(at.id).toBe(`${LONG}-u${turn}`);
  expect(at.top).toBeGreaterThanOrEqual(at.headBottom - 1);
  expect(at.bottom).toBeLessThanOrEqual(at.viewport);
}

/** The timeline's current entry is marked and inside the timeline panel's visible part. */
export async function expectTimelineEntryInView(p: Page, turn: number): Promise<void> {
  const r = await p.evaluate(() => {
    const list = document.querySelector('[data-testid=timeline]')!;
    const current = [...list.querySelectorAll('[aria-current=step]')];
    const box = current[0]?.getBoundingClientRect();
    const panel = list.getBoundingClientRect();
    return {
      n: current.length,
      subject: current[0]?.querySelector('.subject')?.textContent ?? '',
      top: box?.top ?? -1,
      bottom: box?.bottom ?? -1,
      panelTop: panel.top,
      panelBottom: panel.bottom,
      viewport: window.innerHeight,
    };
  });
  expect(r.n).toBe(1);
  expect(r.subject).toMatch(new RegExp(`^turn ${turn}: `));
  expect(r.top).toBeGreaterThanOrEqual(r.panelTop - 1);
  expect(r.bottom).toBeLessThanOrEqual(r.panelBottom + 1);
  expect(r.bottom).toBeLessThanOrEqual(r.viewport);
}

/**
 * Timeline entry `turn`, found as a user finds it: a long timeline draws only the rows in view, so
 * the panel is scrolled to the entry first when it is not drawn.
 */
export async function timelineEntry(p: Page, turn: number) {
  const entry = p.locator('[data-testid=commit]', { hasText: `turn ${turn}: ` });
  if ((await entry.count()) === 0)
    await p.evaluate((k) => {
      const list = document.querySelector<HTMLElement>('[data-testid=timeline]')!;
      const row = list.querySelector<HTMLElement>('[data-testid=commit]')!;
      list.scrollTop = (k - 1) * row.offsetHeight - list.clientHeight / 2;
    }, turn);
  await entry.waitFor();
  // Scrolled into view as a user scrolls before clicking, and the list's redraw of that scroll
  // (on the next animation frame) let through: a click racing the redraw can be lost.
  await entry.scrollIntoViewIfNeeded();
  await p.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  return entry;
}

export const focusedTestId = (p: Page) =>
  p.evaluate(
    () => (document.activeElement as HTMLElement | null)?.dataset.testid ?? document.activeElement?.tagName ?? null,
  );
/** Starts the harness and opens the page before the story, and closes them after it: called once, at the top of the file. */
export function useReplayUx(): void {
  beforeAll(async () => {
    hx = await startHarness('replay-ux', (store) => seedLongSession(store, LONG, TURNS));
    ({ context, page, errors } = await hx.open(1280, 800));
  });

  afterAll(async () => {
    await hx?.close();
  });
}
