// The replay app as people use it, in real Chromium against the ws-server: replay centred on the
// turn in a long session (the current turn's first message on screen after every step, the
// replay head fixed, the timeline panel keeping its entry in view), the keyboard, focus and
// ARIA, branches viewed read-only, the project flows (status, a move asked first, the dirty-tree
// warning on open), plain-language errors, 390 px, axe-core, a refused token, and the app served
// by the service worker with the server down. Screenshots in test-output/replay-ux/.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_SESSION, NOTES_SESSION } from 'ws-server';
import { axeViolations, boxOf, waitText, waitTurn } from './harness.js';
import {
  context,
  errors,
  expectTimelineEntryInView,
  expectTurnOnScreen,
  focusedTestId,
  hx,
  LONG,
  page,
  screenshot,
  testId,
  textOf,
  timelineEntry,
  TURNS,
  useReplayUx,
  WARNING,
} from './replay-ux-helpers.js';

useReplayUx();

describe('replay centred on the turn (1280×800, an 80-turn session)', () => {
  it('opens at the newest turn with its first message on screen, the turn announced, earlier turns past 20 behind a button', async () => {
    await page.goto(`${hx.url}/#token=${hx.token}`);
    await page.click(`[data-testid=session][data-id=${LONG}]`);
    await waitTurn(page, `Turn ${TURNS} / ${TURNS}`);
    await expectTurnOnScreen(page, TURNS);
    await expectTimelineEntryInView(page, TURNS);
    expect(await textOf(page, 'live')).toBe(`Turn ${TURNS} / ${TURNS} · main`);
    expect(await page.getAttribute(`[data-testid=session][data-id=${LONG}]`, 'aria-current')).toBe('page');
    expect(await textOf(page, 'show-earlier')).toBe('Show 59 earlier turns');
    expect(await testId(page, 'turn-group').count()).toBe(20);
    expect(await testId(page, 'message').count()).toBe(21 * 4);
    await screenshot(page, 'long-turn-80-1280');
  });

  it('prev, next and the keys (← → j k) move to the turn and keep it on screen; focus stays on the control', async () => {
    await page.click('[data-testid=prev]');
    await waitTurn(page, `Turn 79 / ${TURNS}`);
    await expectTurnOnScreen(page, 79);
    expect(await focusedTestId(page)).toBe('prev');
    await page.keyboard.press('ArrowLeft');
    await waitTurn(page, `Turn 78 / ${TURNS}`);
    await expectTurnOnScreen(page, 78);
    expect(await focusedTestId(page)).toBe('prev');
    await page.keyboard.press('k');
    await waitTurn(page, `Turn 77 / ${TURNS}`);
    await expectTurnOnScreen(page, 77);
    await page.keyboard.press('j');
    await waitTurn(page, `Turn 78 / ${TURNS}`);
    await page.keyboard.press('ArrowRight');
    await waitTurn(page, `Turn 79 / ${TURNS}`);
    await expectTurnOnScreen(page, 79);
    await expectTimelineEntryInView(page, 79);
    expect(await textOf(page, 'live')).toBe(`Turn 79 / ${TURNS} · main`);
    await page.click('[data-testid=next]');
    await waitTurn(page, `Turn ${TURNS} / ${TURNS}`);
    // next is disabled at the last turn: focus goes to the turn indicator, not to the page body.
    expect(await focusedTestId(page)).toBe('turn');
    // The keys are the user's inside a field: an arrow in the composer moves no turn.
    await page.focus('[data-testid=message-input]');
    await page.keyboard.press('ArrowLeft');
    expect(await textOf(page, 'turn')).toBe(`Turn ${TURNS} / ${TURNS}`);
  });

  it('a timeline jump to turn 40 shows turn 40 under the fixed head, and the timeline panel scrolled itself to the entry', async () => {
    await (await timelineEntry(page, 40)).click();
    await waitTurn(page, `Turn 40 / ${TURNS}`);
    await expectTurnOnScreen(page, 40);
    await expectTimelineEntryInView(page, 40);
    // The replay head stays at the top of the viewport after the page scrolled.
    const head = await boxOf(page, '[data-testid=replay-head]');
    expect(head.y).toBeGreaterThanOrEqual(0);
    expect(head.y).toBeLessThan(20);
    expect(await page.evaluate(() => window.scrollY)).toBeGreaterThan(0);
    await screenshot(page, 'long-turn-40-1280');
    await (await timelineEntry(page, 3)).click();
    await waitTurn(page, `Turn 3 / ${TURNS}`);
    await expectTurnOnScreen(page, 3);
    await expectTimelineEntryInView(page, 3);
  });

  it('the timeline draws only the rows in view: the others appear as the panel scrolls, each in its place', async () => {
    const drawn = () =>
      page.$$eval('[data-testid=commit]', (as) =>
        as.map((a) => ({
          subject: a.querySelector('.subject')!.textContent!,
          pos: Number(a.parentElement!.getAttribute('aria-posinset')),
          size: Number(a.parentElement!.getAttribute('aria-setsize')),
        })),
      );
    const before = await drawn();
    expect(before.length).toBeGreaterThan(0);
    expect(before.length).toBeLessThan(TURNS);
    for (const r of before) {
      expect(r.size).toBe(TURNS);
      expect(r.subject).toMatch(new RegExp(`^turn ${r.pos}: `));
    }
    expect(await textOf(page, 'timeline-heading')).toBe(`Timeline · main · ${TURNS} commits`);
    // Scrolled to its top, the panel shows turn 1's entry where a whole list would have it.
    await page.$eval('[data-testid=timeline]', (l) => {
      l.scrollTop = 0;
    });
    const first = page.locator('[data-testid=commit]', { hasText: 'turn 1: ' });
    await first.waitFor();
    const [entry, list] = [await first.boundingBox(), await testId(page, 'timeline').boundingBox()];
    expect(entry!.y).toBeGreaterThanOrEqual(list!.y - 1);
    expect(entry!.y).toBeLessThan(list!.y + 40);
    expect(await page.$eval('[data-testid=timeline]', (l) => l.scrollHeight)).toBe(
      TURNS * (await first.evaluate((a) => (a as HTMLElement).offsetHeight)),
    );
  });

  it('earlier turns fold away and unfold one by one', async () => {
    await (await timelineEntry(page, 40)).click();
    await waitTurn(page, `Turn 40 / ${TURNS}`);
    await page.click('[data-testid=fold-earlier]');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=message]').length === 4);
    expect(await page.$$eval('[data-testid=message]', (els) => els.map((e) => (e as HTMLElement).dataset.id))).toEqual([
      `${LONG}-u40`,
      `${LONG}-a40`,
      `${LONG}-t40`,
      `${LONG}-r40`,
    ]);
    expect(await page.getAttribute('[data-testid=turn-toggle-39]', 'aria-expanded')).toBe('false');
    await page.click('[data-testid=turn-toggle-39]');
    expect(await page.getAttribute('[data-testid=turn-toggle-39]', 'aria-expanded')).toBe('true');
    expect(await testId(page, 'message').count()).toBe(8);
    await page.click('[data-testid=fold-earlier]');
    await page.click('[data-testid=fold-earlier]');
    expect(await testId(page, 'message').count()).toBe(20 * 4 + 4);
  });

  it('the composer is labelled; Enter adds a line, Ctrl+Enter sends, and the reply is on screen', async () => {
    await page.click(`[data-testid=session][data-id=${NOTES_SESSION}]`);
    await waitTurn(page, 'Turn 2 / 2');
    const box = page.getByLabel('Message', { exact: true });
    await box.fill('First line');
    await box.press('Enter');
    await box.pressSequentially('second line');
    expect(await box.inputValue()).toBe('First line\nsecond line');
    expect(await textOf(page, 'turn')).toBe('Turn 2 / 2');
    await box.press('Control+Enter');
    await waitTurn(page, 'Turn 3 / 3');
    const reply = page.locator('[data-testid=current-turn] [data-testid=message][data-role=assistant]').last();
    expect(await reply.innerText()).toContain('You said: First line\nsecond line');
    expect(await reply.isVisible()).toBe(true);
    const r = await reply.boundingBox();
    expect(r!.y + r!.height).toBeLessThanOrEqual(800);
  });
});

describe('branches', () => {
  it('reads as words, is viewed read-only with what differs from main, and becomes HEAD only on the button', async () => {
    await page.click(`[data-testid=session][data-id=${DEMO_SESSION}]`);
    await waitTurn(page, 'Turn 5 / 5');
    expect(await page.$$eval('[data-testid=branch] option', (os) => os.map((o) => o.textContent))).toEqual([
      'main · 5 turns (HEAD)',
      'retry of turn 3 · 3 turns',
    ]);
    await page.selectOption('[data-testid=branch]', 'retry-d-a3r');
    await waitTurn(page, 'Turn 3 / 3');
    expect(await hx.store.dag.getHead(DEMO_SESSION)).toBe('d-a5');
    expect(await textOf(page, 'viewing-branch')).toBe('Viewing retry of turn 3, read-only: HEAD stays on main.');
    await page.click('[data-testid=branch-diff] summary');
    expect(await textOf(page, 'branch-diff-main')).toBe('Fix the TODO in parser.ts');
    expect(await textOf(page, 'branch-diff-here')).toBe('Fix the TODO in parser.ts');
    await screenshot(page, 'branch-view');
  });
});

describe('project flows', () => {
  let workdir = '';
  let projectId = '';
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: workdir, encoding: 'utf8', env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' } });

  it('shows the dirty-tree warning as soon as a session of the project opens, and drops it once the tree is clean — nothing committed', async () => {
    workdir = join(hx.tmp, 'work', 'docs');
    mkdirSync(workdir, { recursive: true });
    execFileSync('git', ['init', '-q', '-b', 'main', workdir]);
    writeFileSync(join(workdir, 'README.md'), '# docs\n');
    git('add', 'README.md');
    git('-c', 'user.name=Ada', '-c', 'user.email=ada@example.org', 'commit', '-qm', 'first commit');
    const project = await hx.store.projects.createProject({ name: 'Docs', workdir, description: null });
    projectId = project.id;
    await hx.store.projects.addSessionToProject(project.id, DEMO_SESSION);
    writeFileSync(join(workdir, 'draft.md'), 'mine\n');
    const head = git('rev-parse', 'HEAD');

    await page.goto(`${hx.url}/#/s/${DEMO_SESSION}`);
    await page.reload();
    await waitTurn(page, 'Turn 5 / 5');
    await waitText(page, 'project-warning', WARNING);
    expect(await textOf(page, 'project-warning')).toBe(WARNING);
    expect(await page.getAttribute('[data-testid=project-warning]', 'title')).toBe(
      'your uncommitted changes: draft.md',
    );
    const w = await boxOf(page, '[data-testid=project-warning]');
    expect(w.y).toBeGreaterThanOrEqual(0);
    expect(w.y + w.height).toBeLessThanOrEqual(800);
    await screenshot(page, 'dirty-on-open');
    // Still there on the next turn while the tree is dirty; gone once it is clean.
    await page.click('[data-testid=prev]');
    await waitTurn(page, 'Turn 4 / 5');
    expect(await testId(page, 'project-warning').count()).toBe(1);
    rmSync(join(workdir, 'draft.md'));
    await page.click('[data-testid=next]');
    await waitTurn(page, 'Turn 5 / 5');
    await page.waitForFunction(
      () => document.querySelectorAll('[data-testid=project-warning]').length === 0,
      undefined,
      { timeout: 30_000 },
    );
    expect(git('rev-parse', 'HEAD')).toBe(head);
    expect(git('status', '--porcelain')).toBe('');
  });

  it("changes a project's status from its page", async () => {
    await page.click('[data-testid=project-indicator]');
    await page.waitForSelector('[data-testid=project-status-select]');
    expect(await textOf(page, 'project-status')).toBe('active');
    await page.selectOption('[data-testid=project-status-select]', 'paused');
    await waitText(page, 'project-status', 'paused');
    expect((await hx.store.projects.getProject(projectId))?.status).toBe('paused');
    expect(await textOf(page, 'notice')).toContain('Docs is now paused: the agent’s edits are not auto-committed.');
    expect(
      await page.getAttribute(`[data-testid=project][data-id=${projectId}] [data-testid=status-dot]`, 'class'),
    ).toBe('dot status-paused');
    await page.selectOption('[data-testid=project-status-select]', 'active');
    await waitText(page, 'project-status', 'active');
    expect((await hx.store.projects.getProject(projectId))?.status).toBe('active');
  });

  it('moving a session out of another project asks first; Cancel changes nothing', async () => {
    const other = await hx.store.projects.createProject({
      name: 'Other',
      workdir: join(hx.tmp, 'work'),
      description: null,
    });
    await page.goto(`${hx.url}/#/p/${other.id}`);
    await page.reload();
    await page.waitForSelector('[data-testid=add-session]');
    await page.selectOption('[data-testid=add-session] select', DEMO_SESSION);
    await page.click('[data-testid=add-session] button[type=submit]');
    await waitText(page, 'move-confirm', 'belongs to Docs');
    expect(await textOf(page, 'move-confirm')).toContain(
      '“Fix the parser TODOs” belongs to Docs. A session is in one project at a time: move it to Other?',
    );
    await screenshot(page, 'move-confirm');
    await page.click('[data-testid=move-no]');
    expect(await testId(page, 'move-confirm').count()).toBe(0);
    expect((await hx.store.projects.projectOfSession(DEMO_SESSION))?.id).toBe(projectId);
    await page.click('[data-testid=add-session] button[type=submit]');
    await page.click('[data-testid=move-yes]');
    await waitText(page, 'project-sessions', 'Fix the parser TODOs');
    expect((await hx.store.projects.projectOfSession(DEMO_SESSION))?.id).toBe(other.id);
  });

  it('imports existing git repositories as projects: the plan first, nothing created until confirmed, nothing written in them', async () => {
    const code = join(hx.tmp, 'code');
    for (const r of ['site', 'libs/tokenizer']) execFileSync('git', ['init', '-q', join(code, r)]);
    const gitFiles = () => ['site', 'libs/tokenizer'].map((r) => readdirSync(join(code, r, '.git')).sort());
    const before = gitFiles();
    const count = (await hx.store.projects.listProjects()).length;
    await page.click('[data-testid=import-projects]');
    await page.fill('[data-testid=import-dir]', code);
    await page.click('[data-testid=import-find]');
    await page.waitForSelector('[data-testid=import-row]');
    expect(
      await page.$$eval('[data-testid=import-row]', (els) =>
        els.map((e) => [(e as HTMLElement).dataset.status, e.textContent]),
      ),
    ).toEqual([
      ['new', 'tokenizer will be created'],
      ['new', 'site will be created'],
    ]);
    expect((await hx.store.projects.listProjects()).length).toBe(count);
    await screenshot(page, 'import-plan');
    await page.click('[data-testid=import-apply]');
    await waitText(page, 'notice', 'Imported 2 projects');
    expect(
      await page.$$eval('[data-testid=import-row]', (els) => els.map((e) => (e as HTMLElement).dataset.status)),
    ).toEqual(['created', 'created']);
    const projects = await hx.store.projects.listProjects();
    expect(projects.slice(count).map((p) => [p.name, p.workdir])).toEqual([
      ['tokenizer', join(code, 'libs/tokenizer')],
      ['site', join(code, 'site')],
    ]);
    expect(await page.$$eval('[data-testid=project] .title', (els) => els.map((e) => e.textContent))).toEqual(
      projects.map((p) => p.name),
    );
    expect(gitFiles()).toEqual(before);
  });

  it('errors read as sentences with the code on a details line, and do not follow the user to the next page', async () => {
    await page.goto(`${hx.url}/#/s/ghost-session`);
    await waitText(page, 'notice', 'That session no longer exists.');
    expect(await textOf(page, 'notice-details')).toBe('SESSION_NOT_FOUND: no session "ghost-session"');
    await page.click(`[data-testid=session][data-id=${NOTES_SESSION}]`);
    await waitTurn(page, 'Turn 3 / 3');
    expect(await testId(page, 'notice').count()).toBe(0);
  });
});

describe('any screen, and assistive technology', () => {
  it('has no serious or critical axe-core violation at 1280 px (a session, a project)', async () => {
    await page.click(`[data-testid=session][data-id=${LONG}]`);
    await waitTurn(page, `Turn ${TURNS} / ${TURNS}`);
    expect(await axeViolations(page)).toEqual([]);
    await page.click(`[data-testid=project]`);
    await page.waitForSelector('[data-testid=project-status-select]');
    expect(await axeViolations(page)).toEqual([]);
  });

  it('at 390 px: no sideways scroll, the sidebar a drawer, the timeline under the chat, the turn on screen, no axe violation', async () => {
    const small = await hx.open(390, 844);
    const p = small.page;
    try {
      await p.goto(`${hx.url}/#token=${hx.token}`);
      await p.waitForSelector('[data-testid=menu]');
      expect(await testId(p, 'sidebar').isVisible()).toBe(false);
      await p.click('[data-testid=menu]');
      expect(await p.getAttribute('[data-testid=menu]', 'aria-expanded')).toBe('true');
      await p.click(`[data-testid=session][data-id=${LONG}]`);
      await waitTurn(p, `Turn ${TURNS} / ${TURNS}`);
      // Choosing a session closes the drawer (it slides out in 150 ms).
      await testId(p, 'sidebar').waitFor({ state: 'hidden', timeout: 10_000 });
      expect(await p.getAttribute('[data-testid=menu]', 'aria-expanded')).toBe('false');
      const noSideways = () =>
        p.evaluate(() => ({
          scroll: document.documentElement.scrollWidth,
          width: document.documentElement.clientWidth,
        }));
      expect((await noSideways()).scroll).toBeLessThanOrEqual(390);
      await p.click('[data-testid=prev]');
      await waitTurn(p, `Turn 79 / ${TURNS}`);
      await expectTurnOnScreen(p, 79);
      const [messagesBox, timelineBox] = [
        await boxOf(p, '[data-testid=messages]'),
        await boxOf(p, '[data-testid=timeline]'),
      ];
      expect(timelineBox.y).toBeGreaterThan(messagesBox.y + messagesBox.height - 1);
      expect((await noSideways()).scroll).toBeLessThanOrEqual(390);
      await screenshot(p, 'long-turn-79-390');
      expect(await axeViolations(p)).toEqual([]);
      await p.click('[data-testid=menu]');
      await p.click('[data-testid=project]');
      await p.waitForSelector('[data-testid=project-status-select]');
      expect((await noSideways()).scroll).toBeLessThanOrEqual(390);
      await screenshot(p, 'project-390');
      await p.click('[data-testid=menu]');
      await p.click('[data-testid=new-project]');
      await p.fill('input[name=workdir]', 'relative/dir');
      await p.fill('input[name=name]', 'x');
      await p.click('[data-testid=create-project]');
      await waitText(p, 'new-project-error', 'INVALID_WORKDIR');
      expect(await textOf(p, 'new-project-error')).toMatch(
        /^The directory must be an absolute path on the server’s machine, like \/home\/you\/code\/project\.\s+INVALID_WORKDIR: workdir must be an absolute path: "relative\/dir"$/,
      );
      expect((await noSideways()).scroll).toBeLessThanOrEqual(390);
      await screenshot(p, 'new-project-error-390');
    } finally {
      await small.context.close();
    }
  });
});

describe('the token, and the server gone', () => {
  it('a refused token gets a field for the right one', async () => {
    const fresh = await hx.open(1280, 800);
    const p = fresh.page;
    try {
      await p.goto(`${hx.url}/#token=not-the-token`);
      await p.waitForSelector('[data-testid=token-form]');
      expect(await textOf(p, 'notice')).toContain('The server refused this page: the token is missing or wrong.');
      expect(await textOf(p, 'mode')).toBe('○ offline — saved in this browser');
      await p.getByLabel('Access token').fill(hx.token);
      await p.click('[data-testid=token-submit]');
      await waitText(p, 'mode', '● online');
      expect(await testId(p, 'token-form').count()).toBe(0);
      expect(await testId(p, 'session').count()).toBe(3);
    } finally {
      await fresh.context.close();
    }
  });

  it('with the server down, a new tab after install gets the app from the service worker', async () => {
    await waitText(page, 'app-cache', 'app cached for offline use');
    await hx.server.close();
    const tab = await context.newPage();
    await tab.goto(`${hx.url}/`);
    await tab.waitForSelector('[data-testid=mode]');
    expect(await textOf(tab, 'mode')).toBe('○ offline — saved in this browser');
    expect(await textOf(tab, 'notice')).toContain('Offline: the server is unreachable.');
    await screenshot(tab, 'server-down-new-tab');
    expect(
      errors.filter((e) => !/ERR_CONNECTION_REFUSED|WebSocket connection|Failed to load resource|healthz/.test(e)),
    ).toEqual([]);
  });
});
