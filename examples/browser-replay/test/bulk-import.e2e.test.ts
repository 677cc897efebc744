// The browser DAG's bulk import (`IdbDag.importSessionRows`, what "Save for offline" writes the
// rows with: one transaction for the rows given) against `importRows` one row at a time, in
// Chromium: the same rows, session row and counts, the same refusals, all or nothing.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, REPO } from './harness.js';

const PAGE_DIR = resolve(import.meta.dirname, 'bulk-import');
const OUT = join(REPO, 'test-output', 'bulk-import-page');
let result: Record<string, unknown> & {
  first: { bulk: unknown; single: unknown };
  second: { bulk: { nodes: unknown[] }; single: unknown };
  counts: { bulk: unknown; single: unknown };
  refusals: { bulk: string[]; single: string[]; after: number };
  ms: { bulk: number; single: number };
};

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run \`node scripts/setup.mjs\``);
  await build({
    root: PAGE_DIR,
    configFile: false,
    logLevel: 'warn',
    resolve: { conditions: ['source', 'browser', 'module', 'import', 'default'] },
    build: { outDir: OUT, emptyOutDir: true, target: 'es2022', reportCompressedSize: false },
  });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const page = await browser.newPage();
    await page.route('http://bulk.test/**', (route) => {
      const path = new URL(route.request().url()).pathname;
      const file = join(OUT, path === '/' ? 'index.html' : path);
      if (!file.startsWith(OUT) || !existsSync(file)) return route.fulfill({ status: 404 });
      return route.fulfill({
        body: readFileSync(file),
        contentType: file.endsWith('.js') ? 'text/javascript' : 'text/html',
      });
    });
    await page.goto('http://bulk.test/');
    result = (await page.evaluate(() => (window as unknown as { bulk: Promise<unknown> }).bulk)) as typeof result;
  } finally {
    await browser.close();
    rmSync(OUT, { recursive: true, force: true });
  }
}, 120_000);

afterAll(() => undefined);

describe('IdbDag.importSessionRows (one transaction) vs importRows row by row', () => {
  it('stores the same rows and session row', () => {
    expect(result).not.toHaveProperty('error');
    expect(result.first.bulk).toEqual(result.first.single);
    expect(result.second.bulk).toEqual(result.second.single);
    expect(result.second.bulk.nodes).toHaveLength(601);
  });

  it('counts the same (created, added, updated, unchanged, last seq)', () => {
    expect(result.counts.bulk).toEqual(result.counts.single);
    expect(result.counts.bulk).toEqual([
      { created: true, added: 600, updated: 0, unchanged: 0, lastSeq: 600 },
      { created: false, added: 1, updated: 1, unchanged: 5, lastSeq: 601 },
    ]);
  });

  it('refuses a seq or an id that means another node here, as importRows does, writing nothing', () => {
    expect(result.refusals.bulk).toEqual(['DAG_DUPLICATE_SEQ', 'DAG_DUPLICATE_ID']);
    expect(result.refusals.single).toEqual(result.refusals.bulk);
    expect(result.refusals.after).toBe(601);
    console.log(
      `600 rows: one transaction ${result.ms.bulk.toFixed(0)} ms, row by row ${result.ms.single.toFixed(0)} ms`,
    );
  });
});
