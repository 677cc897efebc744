import { createMirror, exportSession, MemoryDag, type Mirror } from '@entity-git/core';
import { memoryStorage } from '@entity-git/git';
import { FAKE_SECRETS, SECRET_SESSION, secretNodes, writeSecretSession } from '@entity-git/test-utils';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright';
import { beforeAll, describe, expect, it } from 'vitest';

const SID = SECRET_SESSION.id;
const FIXTURES = join(import.meta.dirname, 'fixtures', 'export');
const COMMIT_URL = 'https://git.example.com/sessions/secrets-1/commit/{commit}';

let mirror: Mirror;
let unredacted: Mirror;

beforeAll(async () => {
  const dag = new MemoryDag();
  await writeSecretSession(dag);
  mirror = createMirror({ dag, storage: memoryStorage(), root: '/m' });
  await mirror.sync(SID);
  // A repository written without redaction: the export redacts on its own.
  unredacted = createMirror({ dag, storage: memoryStorage(), root: '/u', redaction: false });
  await unredacted.sync(SID);
});

/** The expected file's bytes (written on the first run with EG_WRITE_GOLDEN=1, then read for review). */
function golden(name: string, actual: string): string {
  const file = join(FIXTURES, name);
  if (process.env.EG_WRITE_GOLDEN === '1' && !existsSync(file)) writeFileSync(file, actual);
  return readFileSync(file, 'utf8');
}

describe('exportSession', () => {
  it('Markdown of the retried branch equals the fixed file: turns, roles, folded tools, tokens, times, commit links, redacted', async () => {
    const md = await exportSession(mirror, SID, {
      format: 'md',
      branch: 'retry-a3r',
      session: SECRET_SESSION,
      commitUrl: COMMIT_URL,
    });
    expect(md).toBe(golden('secrets-1-retry-a3r.md', md));
    for (const s of Object.values(FAKE_SECRETS)) expect(md).not.toContain(s);
  });

  it('HTML of main equals the fixed file, and the same from a repository written without redaction', async () => {
    const options = { format: 'html', branch: 'main', session: SECRET_SESSION } as const;
    const html = await exportSession(mirror, SID, options);
    expect(html).toBe(golden('secrets-1-main.html', html));
    // The same page but for the commit ids (the repositories' differ: one holds the secrets).
    const ids = (text: string) => text.replace(/[0-9a-f]{40}/g, '<commit>');
    expect(ids(await exportSession(unredacted, SID, options))).toBe(ids(html));
    for (const s of Object.values(FAKE_SECRETS)) expect(html).not.toContain(s);
  });

  it('jsonl gives one redacted node per line, up to the turn asked', async () => {
    const jsonl = await exportSession(unredacted, SID, { format: 'jsonl', branch: 'main', turn: 1 });
    const lines = jsonl
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((n) => n.id)).toEqual(['s1', 'u1', 'a1', 't1', 't2', 'a2']);
    expect(lines[1].content).toBe('Deploy using [REDACTED:github] and key [REDACTED:aws] please');
    expect(lines[3].metadata).toEqual({ tool: 'read', env: { NPM_TOKEN: '[REDACTED:npm]' } });
    const raw = await exportSession(unredacted, SID, { format: 'jsonl', branch: 'main', turn: 1, redaction: false });
    expect(
      raw
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(secretNodes().slice(0, 6));
  });

  it('refuses a turn out of range and a bad format with INVALID_ARGUMENT, an unknown branch with BRANCH_NOT_FOUND', async () => {
    await expect(exportSession(mirror, SID, { format: 'md', turn: 3 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(exportSession(mirror, SID, { format: 'pdf' as 'md' })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(exportSession(mirror, SID, { format: 'md', branch: 'nope' })).rejects.toMatchObject({
      code: 'BRANCH_NOT_FOUND',
    });
  });

  it('the HTML opens in Chromium with no request but its own file, and shows every turn', async () => {
    const html = await exportSession(mirror, SID, {
      format: 'html',
      branch: 'retry-a3r',
      session: SECRET_SESSION,
      commitUrl: COMMIT_URL,
    });
    const file = join(mkdtempSync(join(tmpdir(), 'eg-export-')), 'export.html');
    writeFileSync(file, html);
    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu'],
    });
    try {
      const page = await browser.newPage();
      const requests: string[] = [];
      page.on('request', (r) => requests.push(r.url()));
      await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
      expect(await page.locator('section h2').allTextContents()).toEqual(['Turn 1', 'Turn 2']);
      expect(await page.locator('details').count()).toBe(4);
      await page.locator('details summary').first().click();
      expect(await page.locator('details[open] pre').first().textContent()).toContain('deploy.env');
      expect(requests).toEqual([pathToFileURL(file).href]);
    } finally {
      await browser.close();
    }
  }, 120_000);
});
