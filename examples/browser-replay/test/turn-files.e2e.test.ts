// The replay app's "files changed" panel in Chromium against the ws-server, whose project git is
// shadow mode's (`ShadowProjectGit`): turns sent from the page, each edited by the agent's tools and
// by a real shell command, listed with their exact line counts; one file's diff, line for line as
// native git's; a restore after the user edited one of the same files (that file skipped and
// listed, the others back to their bytes before the turn), its undo giving back the exact tree,
// and the user's `.git` untouched byte for byte. At 390 px the same in auto-commit mode, where a
// restore never moves the user's branch. Screenshots in test-output/turn-files/.
import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { createNodeProjectGit, ShadowProjectGit } from '@entity-git/project/node';
import type { Page } from 'playwright';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SESSION, NOTES_SESSION, type Agent, type AgentInput } from 'ws-server';
import { axeViolations, startHarness, waitTurn, type Harness } from './harness.js';

const sh = promisify(execFile);

let hx: Harness;
let base = '';
let shadow: ShadowProjectGit;
let shot = 0;
/** What the agent does in the next turn sent (its tools, its shell); taken by that turn. */
let nextTurn: ((input: AgentInput) => Promise<void>) | null = null;

const agent: Agent = async (input) => {
  const plan = nextTurn;
  nextTurn = null;
  if (plan !== null) await plan(input);
  return `Done: ${String(input.message.content)}`;
};

const git = (cwd: string, ...args: string[]) =>
  spawnSync('git', ['-c', 'user.name=Ada', '-c', 'user.email=ada@example.org', ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' },
  });
const gitOk = (cwd: string, ...args: string[]) => {
  const r = git(cwd, ...args);
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
};

/** Every file under `dir` (or only under its `.git`), path → bytes; `.git` left out unless asked. */
function files(dir: string, only: 'tree' | '.git'): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (at: string) => {
    for (const e of readdirSync(at, { withFileTypes: true })) {
      const full = join(at, e.name);
      const rel = relative(dir, full);
      if (only === 'tree' && rel === '.git') continue;
      if (e.isDirectory()) walk(full);
      else out.set(rel, readFileSync(full).toString('base64'));
    }
  };
  walk(only === 'tree' ? dir : join(dir, '.git'));
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** Native git's judgement of one file between two copies: its added and removed lines, and its hunks. */
function nativeDiff(from: string, to: string): { added: number; removed: number; hunks: string[] } {
  const numstat = git(tmpdir(), 'diff', '--no-index', '--numstat', '--', from, to).stdout;
  const [added, removed] = numstat.split('\t').map(Number);
  const text = git(tmpdir(), 'diff', '--no-index', '--no-color', '--', from, to).stdout;
  const lines = text.replace(/\n$/, '').split('\n');
  return { added: added!, removed: removed!, hunks: lines.slice(lines.findIndex((l) => l.startsWith('@@'))) };
}

/** A copy of the work tree (without `.git`) to compare with later. */
function copyTree(workdir: string, name: string): string {
  const to = join(base, 'copies', name);
  rmSync(to, { recursive: true, force: true });
  for (const [rel, bytes] of files(workdir, 'tree')) {
    mkdirSync(join(to, rel, '..'), { recursive: true });
    writeFileSync(join(to, rel), Buffer.from(bytes, 'base64'));
  }
  return to;
}

async function screenshot(p: Page, name: string): Promise<void> {
  shot++;
  await p.screenshot({ path: join(hx.shots, `${String(shot).padStart(2, '0')}-${name}.png`), fullPage: true });
}

async function send(p: Page, text: string, turn: string): Promise<void> {
  await p.fill('[data-testid=message-input]', text);
  await p.click('[data-testid=send]');
  await waitTurn(p, turn);
}

/** The panel's rows once it is drawn for turn `turn`. */
async function listed(p: Page, turn: number) {
  await p.waitForSelector(`[data-testid=turn-files] h3:text-is("Files changed in turn ${turn}")`);
  return p.$$eval('[data-testid=turn-file]', (els) =>
    els.map((el) => {
      const d = (el as HTMLElement).dataset;
      return {
        path: d.path,
        status: d.status,
        added: d.added,
        removed: d.removed,
        by: d.by,
        lines: el.querySelector('[data-testid=turn-file-figures]')?.textContent ?? '',
      };
    }),
  );
}

async function outcome(p: Page, not: string[]): Promise<{ status: string; text: string }> {
  await p.waitForFunction(
    (statuses) => {
      const el = document.querySelector<HTMLElement>('[data-testid=restore-outcome]');
      return el !== null && !statuses.includes(el.dataset.status ?? '');
    },
    not,
    { timeout: 60_000 },
  );
  return p.$eval('[data-testid=restore-outcome]', (el) => ({
    status: (el as HTMLElement).dataset.status ?? '',
    text: (el as HTMLElement).innerText.trim(),
  }));
}

const pathsOf = (p: Page, testId: string) =>
  p.$$eval(`[data-testid=restore-outcome] [data-testid=${testId}]`, (els) =>
    els.map((el) => ({ path: (el as HTMLElement).dataset.path, reason: (el as HTMLElement).dataset.reason ?? null })),
  );

const noSideways = (p: Page) => p.evaluate(() => document.documentElement.scrollWidth);

/** A git repository with the user's first commit, bound to `session` as project `name`. */
async function project(name: string, session: string): Promise<string> {
  const workdir = join(base, 'work', name);
  mkdirSync(join(workdir, 'src'), { recursive: true });
  gitOk(workdir, 'init', '-q', '-b', 'main');
  writeFileSync(join(workdir, 'README.md'), '# Notes\n\nThe plan.\n');
  writeFileSync(join(workdir, 'src', 'app.js'), 'const a = 1;\nconst b = 2;\nexport { a, b };\n');
  gitOk(workdir, 'add', '-A');
  gitOk(workdir, 'commit', '-qm', 'the user’s first commit');
  const p = await hx.store.projects.createProject({ name, workdir, description: null });
  await hx.store.projects.addSessionToProject(p.id, session);
  return workdir;
}

/** The turn of shadow mode: one file by the agent's tools, one edit and one new file by its shell. */
const editTurn = (workdir: string) => async (input: AgentInput) => {
  await input.tools.writeFile('src/app.js', 'const a = 1;\nconst b = 3;\nconst c = a + b;\nexport { a, b, c };\n');
  await sh('sh', ['-c', "printf 'Step one.\\nStep two.\\n' >> README.md && mkdir -p docs && seq 1 5 > docs/log.txt"], {
    cwd: workdir,
  });
};

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'eg-turn-files-'));
  shadow = new ShadowProjectGit({
    root: join(base, 'shadow'),
    autoCommit: createNodeProjectGit({ dir: join(base, 'locks') }),
  });
  hx = await startHarness('turn-files', undefined, { agent, projectGit: shadow });
});

afterAll(async () => {
  await hx?.close();
  if (base) rmSync(base, { recursive: true, force: true });
});

describe('the files panel, the diff and the restore', () => {
  it('at 1280 px in shadow mode: lists a turn’s files, shows a diff by keyboard, restores around the user’s edit and undoes it; the user’s .git untouched', async () => {
    const workdir = await project('Notes', NOTES_SESSION);
    expect((await shadow.settings(workdir)).mode).toBe('shadow');
    const gitBefore = files(workdir, '.git');
    const headBefore = gitOk(workdir, 'rev-parse', 'HEAD');
    const { context, page, errors } = await hx.open(1280, 800);
    try {
      await page.goto(`${hx.url}/#token=${hx.token}`);
      // A session in no project has no panel: there is no workdir to read.
      await page.click(`[data-testid=session][data-id=${DEMO_SESSION}]`);
      await waitTurn(page, 'Turn 5 / 5');
      expect(await page.getByTestId('project-indicator-none').count()).toBe(1);
      expect(await page.getByTestId('turn-files').count()).toBe(0);
      await page.click(`[data-testid=session][data-id=${NOTES_SESSION}]`);
      await waitTurn(page, 'Turn 2 / 2');
      // Turn 2 ran before the session was in a project: no snapshots, said so.
      await page.waitForSelector('[data-testid=turn-files-none][data-status=none]');
      expect(await page.innerText('[data-testid=turn-files-none]')).toContain(
        'No snapshots of the project’s files were kept for this turn',
      );

      const before = copyTree(workdir, 'notes-before-turn-3');
      nextTurn = editTurn(workdir);
      await send(page, 'Fix b and log the steps', 'Turn 3 / 3');
      const after = copyTree(workdir, 'notes-after-turn-3');
      const judged = {
        'README.md': nativeDiff(join(before, 'README.md'), join(after, 'README.md')),
        'docs/log.txt': nativeDiff('/dev/null', join(after, 'docs/log.txt')),
        'src/app.js': nativeDiff(join(before, 'src/app.js'), join(after, 'src/app.js')),
      };
      expect(await listed(page, 3)).toEqual([
        { path: 'README.md', status: 'modified', added: '2', removed: '0', by: 'other', lines: '+2 −0' },
        { path: 'docs/log.txt', status: 'added', added: '5', removed: '0', by: 'other', lines: '+5 −0' },
        { path: 'src/app.js', status: 'modified', added: '3', removed: '2', by: 'tools', lines: '+3 −2' },
      ]);
      for (const [path, j] of Object.entries(judged)) {
        const row = page.locator(`[data-testid=turn-file][data-path="${path}"]`);
        expect([Number(await row.getAttribute('data-added')), Number(await row.getAttribute('data-removed'))]).toEqual([
          j.added,
          j.removed,
        ]);
      }
      expect(await page.innerText('[data-testid=turn-files-summary]')).toContain('3 files, +10 −2 lines');

      // The diff, opened from the keyboard: the same lines as native git's, the marks in the text.
      await page.focus('[data-testid=turn-file][data-path="src/app.js"] [data-testid=turn-file-open]');
      await page.keyboard.press('Enter');
      await page.waitForSelector('[data-testid=turn-file-diff][data-path="src/app.js"]');
      const lines = await page.$$eval('[data-testid=turn-file-diff] [data-testid=diff-line]', (els) =>
        els.map((el) => ({ kind: (el as HTMLElement).dataset.kind, text: el.textContent })),
      );
      const hunks = lines.slice(lines.findIndex((l) => l.kind === 'hunk'));
      expect(hunks.map((l) => l.text)).toEqual(judged['src/app.js'].hunks);
      expect(hunks.filter((l) => l.kind === 'add').map((l) => l.text)).toEqual([
        '+const b = 3;',
        '+const c = a + b;',
        '+export { a, b, c };',
      ]);
      expect(hunks.filter((l) => l.kind === 'del').map((l) => l.text)).toEqual(['-const b = 2;', '-export { a, b };']);
      expect(
        await page.getAttribute(
          '[data-testid=turn-file][data-path="src/app.js"] [data-testid=turn-file-open]',
          'aria-expanded',
        ),
      ).toBe('true');
      // The diff region is the next stop of the Tab key (it scrolls by keyboard).
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.testid)).toBe(
        'turn-file-diff',
      );
      expect(await axeViolations(page)).toEqual([]);
      await screenshot(page, 'panel-and-diff-1280');

      // The user edits one of the turn's files; the restore skips it and puts the others back.
      writeFileSync(join(workdir, 'README.md'), '# Notes\n\nThe plan, as the user wrote it.\n');
      const beforeRestore = files(workdir, 'tree');
      await page.focus('[data-testid=restore-turn-files]');
      await page.keyboard.press('Enter');
      const done = await outcome(page, ['running']);
      expect(done.status).toBe('done');
      expect(done.text).toContain('Restored 2 files to their state before turn 3.');
      expect(await pathsOf(page, 'restored-path')).toEqual([
        { path: 'docs/log.txt', reason: null },
        { path: 'src/app.js', reason: null },
      ]);
      const skipped = await pathsOf(page, 'skipped-path');
      expect(skipped.map((s) => s.path)).toEqual(['README.md']);
      expect(['changed-since-last-snapshot', 'changed-outside-a-turn']).toContain(skipped[0]!.reason);
      expect(done.text).toContain('Skipped 1 file, left as it is');
      expect(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.testid)).toBe(
        'restore-outcome',
      );
      expect(readFileSync(join(workdir, 'src/app.js'))).toEqual(readFileSync(join(before, 'src/app.js')));
      expect(() => readFileSync(join(workdir, 'docs/log.txt'))).toThrow(/ENOENT/);
      expect(readFileSync(join(workdir, 'README.md'), 'utf8')).toBe('# Notes\n\nThe plan, as the user wrote it.\n');
      expect(await axeViolations(page)).toEqual([]);
      await screenshot(page, 'restored-1280');

      await page.click('[data-testid=undo-restore]');
      const undone = await outcome(page, ['done', 'undoing']);
      expect(undone.status).toBe('undone');
      expect(undone.text).toContain('Restore undone: 2 files back as they were before it.');
      expect(files(workdir, 'tree')).toEqual(beforeRestore);
      expect(await page.getByTestId('restore-turn-files').count()).toBe(1);
      await screenshot(page, 'undone-1280');

      // While a turn runs (the agent held until the test lets it go), no restore can start.
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      nextTurn = () => held;
      await page.fill('[data-testid=message-input]', 'Think, edit nothing');
      await page.click('[data-testid=send]');
      await page.waitForSelector('[data-testid=send]:text-is("Sending…")');
      expect(await page.isDisabled('[data-testid=restore-turn-files]')).toBe(true);
      expect(await page.innerText('#restore-hint')).toBe('A turn is running: restore once it has ended.');
      release();
      await waitTurn(page, 'Turn 4 / 4');
      await page.waitForSelector('[data-testid=turn-files] h3:text-is("Files changed in turn 4")');
      expect(await page.innerText('[data-testid=turn-files-summary]')).toBe(
        'This turn changed no file in the project.',
      );
      expect(await page.getByTestId('restore-turn-files').count()).toBe(0);

      // A fork from turn 3 makes another turn 4, whose snapshots take the number's place: main's
      // turn 4 then says so, and offers neither diff nor restore of the fork's.
      await page.click('[data-testid=prev]');
      await waitTurn(page, 'Turn 3 / 4');
      await send(page, 'Another way', 'Turn 4 / 4');
      const fork = await page.$eval('[data-testid=branch]', (el) => (el as HTMLSelectElement).value);
      expect(fork).not.toBe('main');
      await page.waitForSelector(
        '[data-testid=turn-files-summary]:text-is("This turn changed no file in the project.")',
      );
      await page.selectOption('[data-testid=branch]', 'main');
      await page.waitForSelector('[data-testid=turn-files-none][data-status=other-branch]');
      expect(await page.innerText('[data-testid=turn-files-none]')).toContain('are of another branch’s turn 4');
      expect(await page.getByTestId('turn-file').count()).toBe(0);

      // Shadow mode never wrote inside the user's repository: no commit, and every byte of .git as it was.
      expect(gitOk(workdir, 'rev-parse', 'HEAD')).toBe(headBefore);
      expect(files(workdir, '.git')).toEqual(gitBefore);
      expect(gitOk(workdir, 'fsck', '--strict')).toBe('');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 300_000);

  it('at 390 px in auto-commit mode: the panel and the diff fit, and a restore and its undo never move the user’s branch', async () => {
    const workdir = await project('Parser', DEMO_SESSION);
    await shadow.configure(workdir, { mode: 'auto-commit' });
    const { context, page, errors } = await hx.open(390, 844);
    try {
      await page.goto(`${hx.url}/#token=${hx.token}`);
      await page.click('[data-testid=menu]');
      await page.click(`[data-testid=session][data-id=${DEMO_SESSION}]`);
      await waitTurn(page, 'Turn 5 / 5');
      const before = copyTree(workdir, 'parser-before-turn-6');
      // Edits by the tools alone: the auto-commit commits a turn only while nothing else is dirty.
      nextTurn = async ({ tools }) => {
        await tools.writeFile('src/app.js', 'const a = 1;\nconst b = 3;\nconst c = a + b;\nexport { a, b, c };\n');
        await tools.writeFile('docs/log.txt', '1\n2\n3\n4\n5\n');
      };
      await send(page, 'Fix b and log the steps', 'Turn 6 / 6');
      // The auto-commit committed the turn into the user's repository, as that mode does.
      expect(gitOk(workdir, 'log', '-1', '--format=%s')).toBe(
        `[agent ${DEMO_SESSION}] turn 6: Fix b and log the steps`,
      );
      expect(gitOk(workdir, 'show', '--name-only', '--format=', 'HEAD')).toBe('docs/log.txt\nsrc/app.js');
      expect(await listed(page, 6)).toEqual([
        { path: 'docs/log.txt', status: 'added', added: '5', removed: '0', by: 'tools', lines: '+5 −0' },
        { path: 'src/app.js', status: 'modified', added: '3', removed: '2', by: 'tools', lines: '+3 −2' },
      ]);
      await page.click('[data-testid=turn-file][data-path="docs/log.txt"] [data-testid=turn-file-open]');
      await page.waitForSelector('[data-testid=turn-file-diff][data-path="docs/log.txt"]');
      const diff = await page.$$eval('[data-testid=turn-file-diff] [data-testid=diff-line]', (els) =>
        els.map((el) => el.textContent),
      );
      expect(diff.slice(diff.findIndex((l) => l!.startsWith('@@')))).toEqual(
        nativeDiff('/dev/null', join(workdir, 'docs/log.txt')).hunks,
      );
      expect(await noSideways(page)).toBeLessThanOrEqual(390);
      expect(await axeViolations(page)).toEqual([]);
      await screenshot(page, 'panel-and-diff-390');

      // The user commits work of their own on top: the branch is theirs from here.
      writeFileSync(join(workdir, 'mine.txt'), 'the user’s\n');
      gitOk(workdir, 'add', 'mine.txt');
      gitOk(workdir, 'commit', '-qm', 'the user’s second commit');
      const tip = gitOk(workdir, 'rev-parse', 'refs/heads/main');
      const beforeRestore = files(workdir, 'tree');
      await page.click('[data-testid=restore-turn-files]');
      const done = await outcome(page, ['running']);
      expect(done.status).toBe('done');
      expect(await pathsOf(page, 'restored-path')).toEqual([
        { path: 'docs/log.txt', reason: null },
        { path: 'src/app.js', reason: null },
      ]);
      expect(await pathsOf(page, 'skipped-path')).toEqual([]);
      expect(readFileSync(join(workdir, 'src/app.js'))).toEqual(readFileSync(join(before, 'src/app.js')));
      expect(() => readFileSync(join(workdir, 'docs/log.txt'))).toThrow(/ENOENT/);
      expect(readFileSync(join(workdir, 'mine.txt'), 'utf8')).toBe('the user’s\n');
      expect(gitOk(workdir, 'rev-parse', 'refs/heads/main')).toBe(tip);
      expect(gitOk(workdir, 'symbolic-ref', 'HEAD')).toBe('refs/heads/main');
      expect(await noSideways(page)).toBeLessThanOrEqual(390);
      expect(await axeViolations(page)).toEqual([]);
      await screenshot(page, 'restored-390');

      await page.click('[data-testid=undo-restore]');
      expect((await outcome(page, ['done', 'undoing'])).status).toBe('undone');
      expect(files(workdir, 'tree')).toEqual(beforeRestore);
      expect(gitOk(workdir, 'rev-parse', 'refs/heads/main')).toBe(tip);
      expect(gitOk(workdir, 'status', '--porcelain')).toBe('');
      expect(gitOk(workdir, 'fsck', '--strict')).toBe('');
      expect(await noSideways(page)).toBeLessThanOrEqual(390);
      await screenshot(page, 'undone-390');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 300_000);
});
