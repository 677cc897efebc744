// A turn's tokens and its branch's total in the replay head (`session_stats`), in real Chromium
// against the ws-server over the demo DAG, at 1280 and 390 px: the figures follow each step and
// the branch switch, the head keeps the current turn on screen, nothing scrolls sideways.
// Screenshots in test-output/usage/.
import { join } from 'node:path';
import type { Page } from 'playwright';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SESSION } from 'ws-server';
import {
  axeViolations,
  boxOf,
  currentTurnPlacement,
  startHarness,
  waitText,
  waitTurn,
  type Harness,
} from './harness.js';

let hx: Harness;

beforeAll(async () => {
  hx = await startHarness('usage');
});

afterAll(async () => {
  await hx?.close();
});

const text = (page: Page, id: string) => page.locator(`[data-testid=${id}]`).innerText();

/** The turn shown, its figures read, and its first message on screen under the head. */
async function expectFigures(page: Page, turn: string, turnTokens: string, branchTokens: string): Promise<void> {
  await waitTurn(page, turn);
  await waitText(page, 'turn-tokens', turnTokens);
  expect(await text(page, 'turn-tokens')).toBe(turnTokens);
  expect(await text(page, 'branch-tokens')).toBe(branchTokens);
  const at = await currentTurnPlacement(page);
  expect(at.top).toBeGreaterThanOrEqual(at.headBottom - 1);
  expect(at.bottom).toBeLessThanOrEqual(at.viewport);
}

// demo-replay: main's turns hold 40+30, 20+25, 20+30, 10+10 and 35 tokens (220); the retry of
// turn 3's answer has 32 where main has 30 (70 + 45 + 20+32 = 167).
describe.each([
  [1280, 800],
  [390, 844],
])('tokens in the replay head at %i px', (width, height) => {
  it('shows the turn and the branch total, step by step and on the retry branch', async () => {
    const { page, context, errors } = await hx.open(width, height);
    try {
      await page.goto(`${hx.url}/#token=${hx.token}`);
      await page.goto(`${hx.url}/#/s/${DEMO_SESSION}`);
      await expectFigures(page, 'Turn 5 / 5', 'Turn 5: 35 tokens', 'Branch total: 220 tokens (main)');
      await page.click('[data-testid=prev]');
      await page.click('[data-testid=prev]');
      await expectFigures(page, 'Turn 3 / 5', 'Turn 3: 50 tokens', 'Branch total: 220 tokens (main)');
      await page.selectOption('[data-testid=branch]', 'retry-d-a3r');
      await expectFigures(page, 'Turn 3 / 3', 'Turn 3: 52 tokens', 'Branch total: 167 tokens (retry of turn 3)');
      await page.click('[data-testid=prev]');
      await expectFigures(page, 'Turn 2 / 3', 'Turn 2: 45 tokens', 'Branch total: 167 tokens (retry of turn 3)');
      // The line is the head's own: visible, inside it, and nothing scrolls sideways.
      const [usage, head] = [await boxOf(page, '[data-testid=usage]'), await boxOf(page, '[data-testid=replay-head]')];
      expect(usage.y).toBeGreaterThanOrEqual(head.y);
      expect(usage.y + usage.height).toBeLessThanOrEqual(head.y + head.height + 1);
      expect(usage!.x + usage!.width).toBeLessThanOrEqual(width);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      await page.screenshot({ path: join(hx.shots, `usage-retry-turn-2-${width}.png`) });
      expect(await axeViolations(page)).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
