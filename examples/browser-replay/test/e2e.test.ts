// End to end in real Chromium: the app is built here with vite's build(), served by the
// ws-server on 127.0.0.1 over the demo DAG, and driven with playwright the way a user would —
// replay turn by turn, open a commit from the timeline, switch to the retry branch, fork from an
// old turn, create a project, send in it (the agent's auto-commit lands in the project's repo;
// with a user edit in the workdir it is skipped and the design's warning shows), save a session
// for offline, stop the server, reload, replay offline. Every step leaves a screenshot in
// test-output/e2e/ and asserts on what is on screen.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_SESSION, ECHO_NOTES_FILE, NOTES_SESSION } from 'ws-server';
import {
  byTestId,
  consoleErrors,
  count,
  messages,
  page,
  screenshot,
  server,
  store,
  textOf,
  tmp,
  TOKEN,
  url,
  useE2eApp,
  waitText,
  waitTurn,
  WARNING,
} from './e2e-helpers.js';

useE2eApp();

/** The Lexer Project's workdir (made by the New Project case). */
let workdir = '';
/** The git binary in the project's workdir; optional locks off, so reading never rewrites the index. */
const nativeGit = (...args: string[]) =>
  execFileSync('git', args, { cwd: workdir, encoding: 'utf8', env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' } });
const sha1 = (file: string) => createHash('sha1').update(readFileSync(file)).digest('hex');

describe('browser-replay in Chromium', () => {
  it('opens on 127.0.0.1 with the token link: the sessions and an empty Projects section', async () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await page.goto(`${url}/#token=${TOKEN}`);
    await page.waitForSelector('[data-testid=session]');
    expect(page.url()).not.toContain(TOKEN);
    expect(await textOf('mode')).toBe('● online');
    expect(await count('session')).toBe(2);
    // Right after load the stylesheet may not apply yet, and without it innerText puts no line
    // break between a session's title and its branch line: no whitespace is asked for here.
    expect(await byTestId('session').allInnerTexts()).toEqual([
      expect.stringMatching(/^Fix the parser TODOs\s*main · 5 turns$/),
      expect.stringMatching(/^Lexer notes\s*main · 2 turns$/),
    ]);
    expect(await textOf('projects-empty')).toBe('No projects yet.');
    expect(await textOf('new-project')).toBe('+ New Project');
    await screenshot('sessions');
  });

  it('opens a session at its newest turn, and replays it turn by turn with prev and next', async () => {
    await page.click('[data-testid=session][data-id=demo-replay]');
    await waitTurn('Turn 5 / 5');
    expect(await textOf('session-title')).toBe('Fix the parser TODOs');
    expect(await count('message')).toBe(20);
    expect(await count('commit')).toBe(5);
    expect(await byTestId('next').isDisabled()).toBe(true);
    expect(await page.$eval('[data-testid=branch]', (s) => (s as HTMLSelectElement).value)).toBe('main');
    await screenshot('turn-5-of-5');

    const expected = [
      [4, 18, 'All 12 tests pass.'],
      [3, 14, 'parse("") now returns an empty program.'],
      [2, 10, 'Two TODOs: parser.ts:3 and lexer.ts:9.'],
      [1, 5, 'src/ holds parser.ts, lexer.ts and index.ts.'],
    ] as const;
    for (const [turn, n, last] of expected) {
      await page.click('[data-testid=prev]');
      await waitTurn(`Turn ${turn} / 5`);
      const ms = await messages();
      expect(ms.length).toBe(n);
      expect(ms.at(-1)).toEqual({ role: 'assistant', text: last });
      expect(
        await page.$$eval('.timeline li.current [data-testid=commit] .subject', (els) => els.map((e) => e.textContent)),
      ).toEqual([expect.stringMatching(new RegExp(`^turn ${turn}: `))]);
      await screenshot(`prev-turn-${turn}-of-5`);
    }
    expect(await byTestId('prev').isDisabled()).toBe(true);
    expect((await messages()).map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);

    await page.click('[data-testid=next]');
    await waitTurn('Turn 2 / 5');
    expect(await count('message')).toBe(10);
    await screenshot('next-turn-2-of-5');
  });

  it('opens a commit from the timeline', async () => {
    const lines = await byTestId('commit').allInnerTexts();
    expect(lines.length).toBe(5);
    expect(lines[3]).toMatch(/^[0-9a-f]{7} turn 4: Run the tests \d{4}-\d\d-\d\d \d\d:\d\d$/);
    await byTestId('commit').nth(3).click();
    await waitTurn('Turn 4 / 5');
    expect((await messages()).at(-1)!.text).toBe('All 12 tests pass.');
    const sha = await byTestId('commit').nth(3).getAttribute('data-sha');
    expect(sha).toBe((await server.mirror.log(DEMO_SESSION, { branch: 'main' }))[1]!.sha);
    expect(page.url()).toContain(`/c/${sha}`);
    await screenshot('timeline-turn-4');
  });

  it('views the retry branch with the branch switcher (read-only), and makes it HEAD only when asked', async () => {
    expect(await page.$$eval('[data-testid=branch] option', (os) => os.map((o) => o.textContent))).toEqual([
      'main · 5 turns (HEAD)',
      'retry of turn 3 · 3 turns',
    ]);
    await page.selectOption('[data-testid=branch]', 'retry-d-a3r');
    await waitTurn('Turn 3 / 3');
    expect((await messages()).at(-1)).toEqual({
      role: 'assistant',
      text: 'parse("") now throws a clear EmptyInput error instead.',
    });
    expect(await count('commit')).toBe(3);
    // Viewing moved nothing: HEAD is main in the DAG and in the session repository.
    expect(await page.$$eval('[data-testid=branch] option', (os) => os.map((o) => o.textContent))).toEqual([
      'main · 5 turns (HEAD)',
      'retry of turn 3 · 3 turns',
    ]);
    expect(await store.dag.getHead(DEMO_SESSION)).toBe('d-a5');
    expect((await server.mirror.branches(DEMO_SESSION)).find((b) => b.head)?.name).toBe('main');
    expect(await textOf('viewing-branch')).toBe('Viewing retry of turn 3, read-only: HEAD stays on main.');
    await screenshot('retry-branch');
    await page.click('[data-testid=make-head]');
    await waitText('notice', 'HEAD is now retry of turn 3');
    expect(await page.$$eval('[data-testid=branch] option', (os) => os.map((o) => o.textContent))).toEqual([
      'main · 5 turns',
      'retry of turn 3 · 3 turns (HEAD)',
    ]);
    expect(await store.dag.getHead(DEMO_SESSION)).toBe('d-a3r');
    await page.selectOption('[data-testid=branch]', 'main');
    await waitTurn('Turn 5 / 5');
    await page.click('[data-testid=make-head]');
    await waitText('notice', 'HEAD is now main');
    expect(await store.dag.getHead(DEMO_SESSION)).toBe('d-a5');
  });

  it('sends a message from an old turn: a fork, and its branch appears', async () => {
    await byTestId('commit').nth(1).click();
    await waitTurn('Turn 2 / 5');
    expect(await textOf('send')).toBe('Send (fork from turn 2)');
    expect(await textOf('fork-hint')).toContain('sending forks the conversation here');
    await page.fill('[data-testid=message-input]', 'Only the lexer TODO, please');
    await screenshot('fork-compose');
    await page.click('[data-testid=send]');
    await waitTurn('Turn 3 / 3');
    const branch = await page.$eval('[data-testid=branch]', (s) => (s as HTMLSelectElement).value);
    expect(branch).toMatch(/^fork-u-[0-9a-f-]{36}$/);
    expect(await page.$$eval('[data-testid=branch] option', (os) => os.length)).toBe(3);
    const ms = await messages();
    expect(ms.slice(-2)).toEqual([
      { role: 'user', text: 'Only the lexer TODO, please' },
      { role: 'assistant', text: expect.stringContaining('You said: Only the lexer TODO, please') },
    ]);
    expect(ms.length).toBe(12);
    expect(await textOf('notice')).toContain(`Your message started branch ${branch}`);
    expect((await server.mirror.branches(DEMO_SESSION)).find((b) => b.head)?.name).toBe(branch);
    await screenshot('forked');
  });

  it('creates a project with the New Project flow, shows it in the sidebar and above the chat', async () => {
    await page.click('[data-testid=session][data-id=lexer-notes]');
    await waitTurn('Turn 2 / 2');
    expect(await textOf('project-indicator-none')).toBe('No project');
    await page.click('[data-testid=new-project]');
    await page.fill('input[name=workdir]', 'relative/dir');
    await page.click('[data-testid=create-project]');
    await waitText('new-project-error', 'INVALID_WORKDIR');

    workdir = join(tmp, 'work', 'lexer-project');
    mkdirSync(workdir, { recursive: true });
    await page.fill('input[name=workdir]', '');
    await page.type('input[name=workdir]', workdir);
    expect(await page.inputValue('input[name=name]')).toBe('lexer-project');
    await page.fill('input[name=name]', 'Lexer Project');
    expect(await page.isChecked('input[name=with-session]')).toBe(true);
    expect(await byTestId('new-project-form').innerText()).toContain('Add the current session (Lexer notes)');
    await screenshot('new-project-form');
    await page.click('[data-testid=create-project]');
    // The folder is in no repository: git init only once the user says yes.
    await waitText('confirm-init', workdir);
    await page.click('[data-testid=confirm-yes]');
    await page.waitForSelector('[data-testid=project]');
    await waitText('project-indicator', 'Lexer Project');

    expect(await count('project')).toBe(1);
    expect(await byTestId('project').innerText()).toMatch(/^●\s*Lexer Project\s*1 session\s*active$/);
    expect(await byTestId('status-dot').getAttribute('class')).toBe('dot status-active');
    expect(await textOf('project-indicator')).toMatch(/^●\s*Lexer Project\s*…\/work\/lexer-project$/);
    expect(await textOf('notice')).toContain(`git init in ${workdir}`);
    await screenshot('project-created');

    await page.click('[data-testid=project-indicator]');
    await page.waitForSelector('[data-testid=project-name]');
    expect(await textOf('project-name')).toBe('● Lexer Project');
    expect(await textOf('project-workdir')).toBe(workdir);
    expect(await textOf('project-status')).toBe('active');
    expect(await byTestId('project-sessions').innerText()).toMatch(/^Lexer notes\s+main · 2 turns$/);
    expect(await textOf('project-log')).toBe('A git repository with no commit yet.');
    await screenshot('project-page');
  });

  it('sends a message in the project with a clean workdir: one agent commit in its repo, shown above the chat and on the project page', async () => {
    expect(nativeGit('status', '--porcelain')).toBe('');
    expect(nativeGit('rev-list', '--all').trim()).toBe('');
    await page.click('[data-testid=session][data-id=lexer-notes]');
    await waitTurn('Turn 2 / 2');
    await page.fill('[data-testid=message-input]', 'Keep a list of the token kinds');
    await page.click('[data-testid=send]');
    await waitTurn('Turn 3 / 3');
    await waitText('project-commit', 'Agent commit');

    const subject = `[agent ${NOTES_SESSION}] turn 3: Keep a list of the token kinds`;
    // The project's own repository, read with the git binary: exactly one commit, the agent's.
    expect(nativeGit('log', '--format=%s|%an|%cn')).toBe(
      `${subject}|agent (claude-sonnet-4.7 via OpenProgram)|agent (claude-sonnet-4.7 via OpenProgram)\n`,
    );
    expect(nativeGit('show', '--name-only', '--format=', 'HEAD').trim()).toBe(ECHO_NOTES_FILE);
    expect(nativeGit('log', '-1', '--format=%B')).toContain(
      `Session-Commit: ${(await server.mirror.log(NOTES_SESSION))[0]!.sha}`,
    );
    expect(nativeGit('status', '--porcelain')).toBe('');
    expect(readFileSync(join(workdir, ECHO_NOTES_FILE), 'utf8')).toBe(
      `# Notes from the echo agent\n\n- ${NOTES_SESSION}: Keep a list of the token kinds\n`,
    );
    const head = nativeGit('rev-parse', 'HEAD').trim();

    expect(await byTestId('project-commit').getAttribute('data-sha')).toBe(head);
    expect(await textOf('project-commit-subject')).toBe(subject);
    expect(await count('project-warning')).toBe(0);
    expect((await messages()).at(-1)).toEqual({
      role: 'assistant',
      text: expect.stringContaining(`I noted it in ${ECHO_NOTES_FILE}`),
    });
    await screenshot('project-agent-commit');

    await page.click('[data-testid=project-indicator]');
    await page.waitForSelector('[data-testid=project-log-commit]');
    const rows = await page.$$eval('[data-testid=project-log-commit]', (lis) =>
      lis.map((li) => ({
        sha: (li as HTMLElement).dataset.sha,
        agent: (li as HTMLElement).dataset.agent,
        subject: li.querySelector('.subject')?.textContent,
      })),
    );
    expect(rows).toEqual([{ sha: head, agent: 'true', subject }]);
    expect(await byTestId('project-log-commit').innerText()).toMatch(
      /^[0-9a-f]{7}\s+agent\s+\[agent lexer-notes\] turn 3: Keep a list of the token kinds\s+agent \(claude-sonnet-4\.7 via OpenProgram\) · /,
    );
    expect(await byTestId('project-sessions').innerText()).toMatch(/^Lexer notes\s+main · 3 turns$/);
    await screenshot('project-page-agent-commit');
  });

  it("sends a message after the user edited the workdir: the design's warning above the chat, and HEAD, the index and the user's file untouched", async () => {
    // The user edits a file of their own in the project, outside the app.
    const userFile = join(workdir, 'TODO.md');
    writeFileSync(userFile, '# my TODO\n- decode \\u{…} escapes in string literals\n');
    const before = {
      head: nativeGit('rev-parse', 'HEAD'),
      index: sha1(join(workdir, '.git/index')),
      user: sha1(userFile),
      log: nativeGit('log', '--format=%H'),
    };

    await page.click('[data-testid=session][data-id=lexer-notes]');
    await waitTurn('Turn 3 / 3');
    await page.fill('[data-testid=message-input]', 'Add the unicode TODO to the notes');
    await page.click('[data-testid=send]');
    await waitTurn('Turn 4 / 4');
    await waitText('project-warning', WARNING);
    expect(await textOf('project-warning')).toBe(WARNING);
    expect(await byTestId('project-warning').getAttribute('data-reason')).toBe('uncommitted-changes');
    expect(await count('project-commit')).toBe(0);
    // Above the chat: after the replay bar, before the messages.
    expect(
      await page.$$eval('main > *', (els) => els.map((e) => (e as HTMLElement).dataset.testid ?? e.className)),
    ).toEqual(['session-title', 'replay-head', 'columns', 'composer']);
    expect(
      await page.$$eval('[data-testid=replay-head] > *, [data-testid=project-outcome] > *', (els) =>
        els.map((e) => (e as HTMLElement).dataset.testid ?? e.className),
      ),
    ).toEqual(['project-indicator', 'replay-bar', 'usage', 'project-outcome', 'project-warning']);

    // Byte for byte what it was: the user's HEAD, their index, their file; no new commit.
    expect({
      head: nativeGit('rev-parse', 'HEAD'),
      index: sha1(join(workdir, '.git/index')),
      user: sha1(userFile),
      log: nativeGit('log', '--format=%H'),
    }).toEqual(before);
    expect(nativeGit('status', '--porcelain')).toBe(` M ${ECHO_NOTES_FILE}\n?? TODO.md\n`);
    await screenshot('project-warning-banner');

    // The project page still shows the one agent commit.
    await page.click('[data-testid=project-indicator]');
    await page.waitForSelector('[data-testid=project-log-commit]');
    expect(await count('project-log-commit')).toBe(1);
    expect(await byTestId('project-sessions').innerText()).toMatch(/^Lexer notes\s+main · 4 turns$/);
  });

  it("saves a session for offline: the commit ids rebuilt in IndexedDB equal the server's", async () => {
    await page.click('[data-testid=session][data-id=demo-replay]');
    await page.waitForSelector('[data-testid=save-offline]');
    await page.click('[data-testid=save-offline]');
    await waitText('save-summary', 'Saved for offline');
    expect(await textOf('save-summary')).toBe(
      "Saved for offline: 23 nodes, 3 branches — the commit ids rebuilt in this browser equal the server's ✓",
    );
    const rows = await page.$$eval('[data-testid=save-row]', (trs) =>
      trs.map((tr) => {
        const d = (tr as HTMLElement).dataset;
        return { name: d.branch, server: d.server, browser: d.browser, text: tr.textContent };
      }),
    );
    const tips = await server.mirror.branches(DEMO_SESSION);
    expect(rows.map((r) => [r.name, r.server, r.browser])).toEqual(tips.map((b) => [b.name, b.commit, b.commit]));
    expect(rows.every((r) => r.text?.endsWith('✓ equal'))).toBe(true);
    expect(await page.$eval('[data-testid=session][data-id=demo-replay]', (a) => a.textContent)).toContain('saved');
    await screenshot('saved-for-offline');
  });

  it('with the server stopped, a reload still lists and replays the saved session', async () => {
    await waitText('app-cache', 'app cached for offline use');
    const fork = (await server.mirror.branches(DEMO_SESSION)).find((b) => b.head)!;
    const forkLog = (await server.mirror.log(DEMO_SESSION, { branch: fork.name })).map((c) => c.sha);
    const mainLog = (await server.mirror.log(DEMO_SESSION, { branch: 'main' })).map((c) => c.sha);
    await server.close();
    await waitText('notice', 'The server connection closed');
    expect(await textOf('mode')).toBe('○ offline — saved in this browser');
    await screenshot('server-stopped');

    await page.reload();
    await page.waitForSelector('[data-testid=session]');
    // The banner's text, then its close button (a flex item of its own: innerText puts a line break between).
    expect(await textOf('notice')).toMatch(
      /^Offline: the server is unreachable\. Showing the sessions saved in this browser \(read-only\)\.\s*×$/,
    );
    expect(await textOf('mode')).toBe('○ offline — saved in this browser');
    expect(await count('session')).toBe(1);
    expect(await textOf('session')).toMatch(/^Fix the parser TODOs\s+fork-u-[0-9a-f-]{36} · 3 turns$/);
    await screenshot('offline-reload');

    await page.click('[data-testid=session][data-id=demo-replay]');
    await waitTurn('Turn 3 / 3');
    expect((await messages()).at(-1)!.text).toContain('You said: Only the lexer TODO, please');
    expect(await page.$$eval('[data-testid=commit]', (as) => as.map((a) => (a as HTMLElement).dataset.sha))).toEqual(
      [...forkLog].reverse(),
    );
    expect(await textOf('composer-offline')).toContain('replay only');
    await screenshot('offline-turn-3-of-3');
    await page.click('[data-testid=prev]');
    await waitTurn('Turn 2 / 3');
    await page.click('[data-testid=prev]');
    await waitTurn('Turn 1 / 3');
    expect(await count('message')).toBe(5);
    await screenshot('offline-turn-1-of-3');
    await page.click('[data-testid=next]');
    await waitTurn('Turn 2 / 3');
    expect(await count('message')).toBe(10);

    await page.selectOption('[data-testid=branch]', 'main');
    await waitTurn('Turn 5 / 5');
    expect(await page.$$eval('[data-testid=commit]', (as) => as.map((a) => (a as HTMLElement).dataset.sha))).toEqual(
      [...mainLog].reverse(),
    );
    await byTestId('commit').nth(2).click();
    await waitTurn('Turn 3 / 5');
    expect(await count('message')).toBe(14);
    await screenshot('offline-main-turn-3');
    expect(
      consoleErrors.filter(
        (e) => !/ERR_CONNECTION_REFUSED|WebSocket connection|Failed to load resource|healthz/.test(e),
      ),
    ).toEqual([]);
  });

  it('offline, a copy whose rows are not in IndexedDB yet (the save still copying them) replays from the repository', async () => {
    // The rows go in after the repository copy: take them out again, the session row and the copy kept.
    await page.evaluate(
      (id) =>
        new Promise<void>((done, failed) => {
          const open = indexedDB.open('entity-git-replay');
          open.onerror = () => failed(open.error);
          open.onsuccess = () => {
            const tx = open.result.transaction('nodes', 'readwrite');
            tx.objectStore('nodes').delete(IDBKeyRange.bound([id, -Infinity], [id, Infinity]));
            tx.oncomplete = () => {
              open.result.close();
              done();
            };
            tx.onerror = () => failed(tx.error);
          };
        }),
      DEMO_SESSION,
    );
    await page.reload();
    await page.click('[data-testid=session][data-id=demo-replay]');
    await waitTurn('Turn 3 / 3');
    expect((await messages()).at(-1)!.text).toContain('You said: Only the lexer TODO, please');
    await page.click('[data-testid=prev]');
    await waitTurn('Turn 2 / 3');
    expect(await count('message')).toBe(10);
    await page.click('[data-testid=prev]');
    await waitTurn('Turn 1 / 3');
    expect(await count('message')).toBe(5);
  });
});
