// The replay web app (issue 25) in real Chromium over a 2,000-turn session (10,000 nodes): open
// the session, prev / next and timeline jumps, online (the ws-server over SQLite) and offline
// (core's actions in the page over IndexedDB), and "Save for offline" of the 10,000 nodes. The app
// is built with vite as shipped, served by the ws-server on 127.0.0.1, driven with playwright on
// Debian's chromium. Each figure is the time from the user's action (a hash change, as a click
// makes) to the app's `replay:rendered` event for the new turn plus the next animation frame: the
// page drawn, laid out, the turn scrolled into view.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { chromium, type Page } from 'playwright';
import { build } from 'vite';
import { openSqlite } from '../packages/sqlite/src/index.js';
import { createServer, echoAgent } from '../examples/ws-server/src/index.js';
import { seedLongSession } from '../examples/browser-replay/test/long-session.js';
import { align, failWith, stats, writeResults, type Stats } from './lib/measure.js';

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
const APP_DIR = resolve(import.meta.dirname, '../examples/browser-replay');
const SESSION = 'bench-2000';
const TURNS = Number(process.env.REPLAY_APP_TURNS ?? 2000);
const STEPS = 20;
const JUMPS = 10;
const OPENS = 5;
/** The goals of issue 25, ms. */
const GOAL = { open: 300, step: 50, save: 1000 };
const fail = failWith('replay-app');

/** Set the hash in the page and time until the app has drawn `expectTurn` (and the next frame has begun). */
async function timed(page: Page, hash: string, expectTurn: string): Promise<number> {
  return page.evaluate(
    async ([h, want]) => {
      const root = document.getElementById('app')!;
      const t0 = performance.now();
      await new Promise<void>((done) => {
        const on = () => {
          if (
            document.querySelector('[data-testid=turn]')?.textContent !== want ||
            document.querySelector('main')?.dataset.loading !== 'false'
          )
            return;
          root.removeEventListener('replay:rendered', on);
          done();
        };
        root.addEventListener('replay:rendered', on);
        location.hash = h!;
      });
      await new Promise((r) => requestAnimationFrame(r));
      return performance.now() - t0;
    },
    [hash, expectTurn] as const,
  );
}

/** The current timeline entry's commit, as the page marks it. */
const currentEntry = (page: Page) =>
  page.$eval('[data-testid=commit][aria-current=step]', (a) => (a as HTMLElement).dataset.sha!);

/**
 * `shas` gives the session's commits oldest first (sha per turn), asked after the opens so the
 * first stays cold; the page's timeline draws only the rows in view, so they are not read from it.
 */
async function replay(page: Page, label: string, shasOf: () => Promise<string[]>): Promise<Record<string, Stats>> {
  const open: number[] = [];
  for (let i = 0; i < OPENS; i++) {
    await page.evaluate(() => {
      location.hash = '#/';
    });
    await page.waitForSelector('[data-testid=home]');
    open.push(await timed(page, `#/s/${SESSION}`, `Turn ${TURNS} / ${TURNS}`));
  }
  const shas = await shasOf();
  if (shas.length !== TURNS) fail(`${label}: the session has ${shas.length} commits, not ${TURNS}`);
  if ((await currentEntry(page)) !== shas[TURNS - 1]) fail(`${label}: the timeline does not mark the last commit`);
  const step: number[] = [];
  // Back from the last turn, then forward: prev and next as the buttons do (one hash change each).
  for (let k = TURNS - 1; k > TURNS - 1 - STEPS / 2; k--)
    step.push(await timed(page, `#/s/${SESSION}/c/${shas[k - 1]}/main`, `Turn ${k} / ${TURNS}`));
  for (let k = TURNS - STEPS / 2 + 1; k <= TURNS; k++)
    step.push(await timed(page, `#/s/${SESSION}/c/${shas[k - 1]}/main`, `Turn ${k} / ${TURNS}`));
  const jump: number[] = [];
  for (let j = 0; j < JUMPS; j++) {
    const k = 1 + ((j * 617 + 211) % TURNS);
    jump.push(await timed(page, `#/s/${SESSION}/c/${shas[k - 1]}/main`, `Turn ${k} / ${TURNS}`));
  }
  // The first open is the cold one: the server (or the page's offline copy) reads the session's log for the first time.
  return { first: stats(open.slice(0, 1)), open: stats(open), step: stats(step), jump: stats(jump) };
}

export async function run(): Promise<void> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `replay-app bench: ${CHROMIUM} is missing (node scripts/setup.mjs --browser installs Debian's chromium)`,
    );
  const tmp = mkdtempSync(join(tmpdir(), 'entity-git-bench-replay-app-'));
  const built = join(tmp, 'app');
  await build({
    root: APP_DIR,
    configFile: join(APP_DIR, 'vite.config.ts'),
    logLevel: 'warn',
    build: { outDir: built, emptyOutDir: true },
  });
  const store = await openSqlite({ file: join(tmp, 'dag.db') });
  let t = performance.now();
  await seedLongSession(store, SESSION, TURNS, { tools: 2 });
  const seedMs = performance.now() - t;
  const token = randomBytes(24).toString('base64url');
  // The server backfills the session's repository as it starts.
  t = performance.now();
  const server = await createServer({
    db: store,
    root: join(tmp, 'sessions'),
    port: 0,
    token,
    staticDir: built,
    agent: echoAgent,
    projectLocks: join(tmp, 'locks'),
  });
  await server.mirror.sync(SESSION);
  const backfillMs = performance.now() - t;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  let online!: Record<string, Stats>;
  let offline!: Record<string, Stats>;
  let save = 0;
  let check = 0;
  let rowsIn = 0;
  let nodes = 0;
  let userAgent = '';
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    // tsx compiles the functions given to page.evaluate with esbuild's keepNames: they call __name.
    await page.addInitScript(() => {
      (globalThis as { __name?: unknown }).__name = (f: unknown) => f;
    });
    userAgent = await page.evaluate(() => navigator.userAgent);
    await page.goto(`${server.url}/#token=${token}`);
    await page.waitForSelector(`[data-testid=session][data-id=${SESSION}]`);
    console.log(
      `replay-app bench: a ${TURNS}-turn session (${TURNS * 5} nodes) in the replay app, ${browser.version()} at 1280×800; ms from the action to the turn drawn`,
    );
    console.log(
      `  seeded in ${(seedMs / 1000).toFixed(1)} s; the server's backfill ${(backfillMs / 1000).toFixed(1)} s (untimed)`,
    );
    let shas: string[] = [];
    online = await replay(page, 'online', async () => {
      shas = (await server.mirror.log(SESSION)).map((c) => c.sha).reverse();
      return shas;
    });

    // Save for offline, timed in the page from the click: to the copy saved (the server's repository
    // in LightningFS, the session listed: replayable offline), then to the rows all in IndexedDB
    // (steps read their window of turns from them), then to the report of the check (the rows
    // committed again in the page, every branch's id compared with the server's).
    await timed(page, `#/s/${SESSION}`, `Turn ${TURNS} / ${TURNS}`);
    t = performance.now();
    save = await page.evaluate(async () => {
      const t0 = performance.now();
      const saved = () =>
        document.querySelector(
          '[data-testid=save-report][data-phase=checking], [data-testid=save-report][data-phase=done]',
        );
      await new Promise<void>((done) => {
        const seen = new MutationObserver(() => {
          if (!saved()) return;
          seen.disconnect();
          done();
        });
        seen.observe(document.body, { subtree: true, childList: true, attributes: true });
        document.querySelector<HTMLElement>('[data-testid=save-offline]')!.click();
      });
      await new Promise((r) => requestAnimationFrame(r));
      return performance.now() - t0;
    });
    const all = `${TURNS * 5} node`;
    await page.waitForFunction(
      (want) => {
        const text = document.querySelector('[data-testid=save-summary]')?.textContent ?? '';
        return text.includes(`${want}s copied`) || text.includes('Saved for offline');
      },
      all,
      { timeout: 30 * 60_000 },
    );
    rowsIn = performance.now() - t;
    await page.waitForFunction(
      () => document.querySelector('[data-testid=save-summary]')?.textContent?.includes('Saved for offline'),
      undefined,
      { timeout: 30 * 60_000 },
    );
    check = performance.now() - t;
    const summary = (await page.textContent('[data-testid=save-summary]')) ?? '';
    if (!summary?.includes('equal the server')) fail(`the browser's copy differs from the server's: ${summary}`);
    nodes = Number(/(\d[\d,]*) nodes/.exec(summary)?.[1]?.replace(/,/g, '') ?? 0);

    await server.close();
    await page.waitForFunction(() =>
      document.querySelector('[data-testid=mode]')?.textContent?.startsWith('○ offline'),
    );
    // The same commits: the save's check found every branch equal to the server's.
    offline = await replay(page, 'offline', async () => shas);
  } finally {
    await browser.close();
    await server.close().catch(() => undefined);
    await store.close();
    rmSync(tmp, { recursive: true, force: true });
  }
  const o = online as Record<'first' | 'open' | 'step' | 'jump', Stats>;
  const off = offline as Record<'first' | 'open' | 'step' | 'jump', Stats>;
  const f = (s: Stats) => `${s.median.toFixed(1)} / ${s.p90.toFixed(1)}`;
  const goal = (s: Stats, g: number) => `${(s.median / g).toFixed(2)}x of ${g} ms`;
  console.log('');
  console.log(
    align([
      ['action', 'mode', 'median / p90 ms', 'median vs goal'],
      ['first open (cold)', 'online', f(o.first), goal(o.first, GOAL.open)],
      ['open the session', 'online', f(o.open), goal(o.open, GOAL.open)],
      ['prev / next', 'online', f(o.step), goal(o.step, GOAL.step)],
      ['timeline jump', 'online', f(o.jump), goal(o.jump, GOAL.step)],
      ['first open (cold)', 'offline', f(off.first), goal(off.first, GOAL.open)],
      ['open the session', 'offline', f(off.open), goal(off.open, GOAL.open)],
      ['prev / next', 'offline', f(off.step), goal(off.step, GOAL.step)],
      ['timeline jump', 'offline', f(off.jump), goal(off.jump, GOAL.step)],
    ])
      .split('\n')
      .map((l) => `  ${l}`)
      .join('\n'),
  );
  console.log(
    `  save for offline of ${nodes} nodes: ${save.toFixed(0)} ms (${(save / GOAL.save).toFixed(2)}x of the ${GOAL.save} ms goal) to the copy saved (replayable offline); the rows all in IndexedDB after ${rowsIn.toFixed(0)} ms; the check's report after ${check.toFixed(0)} ms, every branch equal to the server's`,
  );
  console.log(`  (${OPENS} opens, ${STEPS} steps, ${JUMPS} jumps each; below 1.00x of a goal meets it)`);
  writeResults('replay-app', {
    node: process.version,
    cpus: cpus().length,
    unit: 'ms',
    turns: TURNS,
    nodes,
    userAgent,
    goals: GOAL,
    seedMs,
    backfillMs,
    online,
    offline,
    saveMs: save,
    rowsMs: rowsIn,
    checkMs: check,
  });
}
