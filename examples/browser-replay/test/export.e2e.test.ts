// The replay app's Export button in Chromium: the branch on screen downloaded as Markdown and as
// one HTML page, made by the export_transcript action over the ws-server; the bytes are those
// core's exportSession gives for the same branch (the server's repository, the same row).
import { exportSession } from '@entity-git/core';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEMO_SESSION } from 'ws-server';
import { consoleErrors, page, server, store, TOKEN, url, useE2eApp, waitTurn } from './e2e-helpers.js';

useE2eApp();

describe('browser-replay: export', () => {
  it('downloads the viewed branch as Markdown and as a self-contained HTML page', async () => {
    await page.goto(`${url}/#token=${TOKEN}`);
    await page.click(`[data-testid=session][data-id=${DEMO_SESSION}]`);
    await waitTurn('Turn 5 / 5');
    const session = await store.dag.getSession(DEMO_SESSION);
    for (const format of ['md', 'html'] as const) {
      await page.selectOption('[data-testid=export-format]', format);
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=export]')]);
      expect(download.suggestedFilename()).toBe(`${DEMO_SESSION}-main.${format}`);
      const text = readFileSync((await download.path())!, 'utf8');
      expect(text).toBe(await exportSession(server.mirror, DEMO_SESSION, { format, branch: 'main', session }));
      expect(text).toContain(format === 'md' ? '## Turn 5' : '<section id="turn-5">');
    }
    expect(consoleErrors).toEqual([]);
  }, 180_000);
});
