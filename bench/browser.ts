// Browser (issue 8): per-turn sync at 1,000 messages in real Chromium on IndexedDB — entity-git's
// browser mirror against isomorphic-git's own `add` + `commit` on LightningFS, interleaved turn
// by turn in one page (bench/browser-page). The page is built with vite, served over http on
// 127.0.0.1 and driven with playwright on Debian's chromium (scripts/setup.mjs --browser installs it).
import { createReadStream, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { chromium } from 'playwright';
import { build } from 'vite';
import type { BrowserBenchResult } from './browser-page/page.js';
import { stats, writeResults } from './lib/measure.js';

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
const HISTORY = 1000;
const WARMUP = 3;
const TIMED = 20;

export async function run(): Promise<void> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `browser bench: ${CHROMIUM} is missing (node scripts/setup.mjs --browser installs Debian's chromium)`,
    );
  const outDir = mkdtempSync(join(tmpdir(), 'entity-git-bench-browser-'));
  await build({
    configFile: false,
    root: join(import.meta.dirname, 'browser-page'),
    logLevel: 'warn',
    resolve: { conditions: ['source', 'browser', 'module', 'import', 'default'] },
    build: { outDir, emptyOutDir: true, minify: false, target: 'es2022', reportCompressedSize: false },
  });
  const types: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript' };
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(
      /^(\.\.[/\\])+/,
      '',
    );
    const file = join(outDir, path === '/' ? 'index.html' : path);
    if (!file.startsWith(outDir) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, {
      'content-type': types[extname(file)] ?? 'application/octet-stream',
      'cache-control': 'no-store',
    });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
  let result: BrowserBenchResult;
  try {
    const page = await browser.newPage();
    if (process.env.TRACE_PATHS) {
      page.on('console', (m) => {
        if (m.text().startsWith('OP') || m.text().startsWith('TL')) console.log(m.text());
      });
      await page.addInitScript(() => {
        (globalThis as { tracePaths?: boolean }).tracePaths = true;
      });
    }
    await page.goto(url);
    await page.waitForFunction(() => document.title === 'ready');
    console.log(
      `browser bench: ms per turn of 5 files at ${HISTORY} messages, ${TIMED} turns (after ${WARMUP} warm-up), interleaved entity-git / isomorphic-git, IndexedDB in ${browser.version()}`,
    );
    // PROFILE=1: a CPU profile of the whole page run, summarised by self time (for the notes).
    const cdp = process.env.PROFILE ? await page.context().newCDPSession(page) : null;
    if (cdp) {
      // Profile entity-git's turns alone: a run without isomorphic-git, then the profiler on for a second one's timed turns.
      await cdp.send('Profiler.enable');
      await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
      await page.exposeFunction('onTimed', async () => {
        await cdp.send('Profiler.start');
      });
      const only = await page.evaluate(
        (o) => (globalThis as unknown as { bench: { run: (x: typeof o) => Promise<BrowserBenchResult> } }).bench.run(o),
        { history: HISTORY, warmup: WARMUP, timed: TIMED, only: 'entity-git' as const },
      );
      console.log(
        `  entity-git alone (profiled): median ${stats(only.entityGit).median.toFixed(1)} ms over ${only.entityGit.length} turns`,
      );
    }
    result = cdp
      ? (null as never)
      : await page.evaluate(
          (o) =>
            (globalThis as unknown as { bench: { run: (x: typeof o) => Promise<BrowserBenchResult> } }).bench.run(o),
          { history: HISTORY, warmup: WARMUP, timed: TIMED },
        );
    if (cdp) {
      const { profile } = (await cdp.send('Profiler.stop')) as {
        profile: {
          nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
          samples: number[];
          timeDeltas: number[];
        };
      };
      const byId = new Map(profile.nodes.map((n) => [n.id, n]));
      const self = new Map<string, number>();
      profile.samples.forEach((id, i) => {
        const f = byId.get(id)!.callFrame;
        const key = `${f.functionName || '(anonymous)'} ${f.url.split('/').pop()}:${f.lineNumber}`;
        self.set(key, (self.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
      });
      for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 40))
        console.log(`  self ${v.toFixed(0).padStart(6)} ms  ${k}`);
      return;
    }
  } finally {
    await browser.close();
    await new Promise((r) => server.close(r));
    if (process.env.KEEP_BUILD) console.log(`kept ${outDir}`);
    else rmSync(outDir, { recursive: true, force: true });
  }
  if (result.trees[0] !== result.trees[1])
    throw new Error(
      `browser bench: the two repositories end on different trees (${result.trees[0]} vs ${result.trees[1]})`,
    );
  const eg = stats(result.entityGit);
  const iso = stats(result.entityGit.map((_, i) => result.isoAdd[i]! + result.isoCommit[i]!));
  const add = stats(result.isoAdd);
  const commit = stats(result.isoCommit);
  const f = (x: number) => x.toFixed(1);
  console.log(
    `  backfill of ${result.messagesStart} messages: ${f(result.backfillMs)} ms (untimed); isomorphic-git's pre-fill (write + add + commit): ${f(result.isoPrefillMs)} ms`,
  );
  console.log(`  same root tree at the end: ${result.trees[0]}`);
  console.log('');
  console.log(`  messages        entity-git sync   isomorphic-git add+commit   (add / commit)   iso/entity-git`);
  console.log(
    `  ${result.messagesStart} → ${result.messagesEnd}     ${f(eg.median)} / ${f(eg.p90)}        ${f(iso.median)} / ${f(iso.p90)}                 (${f(add.median)} / ${f(commit.median)})     ${(iso.median / eg.median).toFixed(2)}x`,
  );
  console.log('  (median / p90 ms; iso/entity-git > 1: entity-git is faster)');
  console.log(
    `  entity-git's file-system calls per turn: ${Object.entries(result.opsPerTurn)
      .sort((a, b) => b[1].ms - a[1].ms)
      .map(([k, v]) => `${k} ${v.calls.toFixed(1)}× ${v.ms.toFixed(1)} ms`)
      .join(', ')}`,
  );
  writeResults('browser', {
    node: process.version,
    cpus: cpus().length,
    unit: 'ms per turn',
    history: HISTORY,
    warmup: WARMUP,
    timed: TIMED,
    userAgent: result.userAgent,
    entityGit: eg,
    isoAddCommit: iso,
    isoAdd: add,
    isoCommit: commit,
    backfillMs: result.backfillMs,
    ratio: iso.median / eg.median,
  });
}
