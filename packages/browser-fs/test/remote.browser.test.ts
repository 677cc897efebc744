import { browserStorage, createBrowserMirror, DEFAULT_ROOT } from '@entity-git/browser-fs';
import type { EntityGitError } from '@entity-git/core';
import { defineRemote, fetchSession, pushSession, restoreSessions } from '@entity-git/remote';
import { writeGolden } from '@entity-git/test-utils';
import http from 'isomorphic-git/http/web';
import { describe, expect, inject, it } from 'vitest';
import type {} from './git-server.global-setup.js';
import { freshDag, GOLDEN_TIPS, unique } from './helpers.js';

const server = inject('gitServer');
const remoteWith = (password: string) =>
  defineRemote({ url: server.template, http, onAuth: () => ({ username: 'browser', password }) });

describe('session repositories over smart HTTP, in Chromium', () => {
  it('restores what Node pushed: identical ids, HEAD from the record, and the mirror finds nothing to do', async () => {
    const storage = browserStorage({ fsName: unique('fs') });
    const sid = server.goldenSession;
    const report = await restoreSessions({
      remote: remoteWith(server.token),
      storage,
      root: DEFAULT_ROOT,
      sessions: [sid],
    });
    expect(report.counts).toMatchObject({ restored: 1, failed: 0 });
    expect(report.entries[0]!.result).toMatchObject({
      head: 'fork-u4',
      remoteHead: 'fork-u4',
      downloaded: true,
      worktreeChanged: false,
    });

    const dag = await freshDag();
    await writeGolden(dag);
    const mirror = createBrowserMirror({ dag, storage });
    const tips = Object.fromEntries((await mirror.branches(sid)).map((b) => [b.name, b.commit]));
    expect(tips).toEqual(GOLDEN_TIPS);
    expect((await mirror.branches(sid)).find((b) => b.head)!.name).toBe('fork-u4');
    expect(await mirror.verify(sid)).toEqual({ sessionId: sid, ok: true, differences: [] });
    expect(await mirror.sync(sid)).toMatchObject({ commitsWritten: 0, branchesMoved: [] });
    expect((await mirror.sync(sid)).noop).toBe(true);
    // Objects and refs only: no working tree in the browser.
    expect((await storage.fs.readdir(mirror.repoPath(sid))).sort()).toEqual(['.git']);
    const again = await fetchSession({ remote: remoteWith(server.token), storage, root: DEFAULT_ROOT, sessionId: sid });
    expect(again).toMatchObject({ downloaded: false, upToDate: ['main', 'fork-u2e', 'fork-u4', 'retry-a4r'] });
    await storage.close();
  });

  it('pushes from the browser, and another page restores the same ids', async () => {
    const sid = server.emptySession;
    const dag = await freshDag();
    await writeGolden(dag, { sessionId: sid });
    const a = createBrowserMirror({ dag, fsName: unique('fs') });
    await a.sync(sid);
    const pushed = await pushSession({
      remote: remoteWith(server.token),
      storage: a.storage,
      root: DEFAULT_ROOT,
      sessionId: sid,
    });
    expect(pushed.pushed).toHaveLength(6); // four branches, the HEAD record, the meta ref
    const mine = Object.fromEntries((await a.branches(sid)).map((b) => [b.name, b.commit]));

    const storage = browserStorage({ fsName: unique('fs') });
    await restoreSessions({ remote: remoteWith(server.token), storage, root: DEFAULT_ROOT, sessions: [sid] });
    const b = createBrowserMirror({ dag, storage });
    expect(Object.fromEntries((await b.branches(sid)).map((x) => [x.name, x.commit]))).toEqual(mine);
    expect(await b.verify(sid)).toMatchObject({ ok: true, differences: [] }); // the meta ref came too
    await a.storage.close();
    await storage.close();
  });

  it('a bad token is REMOTE_AUTH in the browser too', async () => {
    const storage = browserStorage({ fsName: unique('fs') });
    const report = await restoreSessions({
      remote: remoteWith('wrong'),
      storage,
      root: DEFAULT_ROOT,
      sessions: [server.goldenSession],
    });
    expect(report.entries[0]!.action).toBe('failed');
    expect((report.entries[0]!.error as EntityGitError).code).toBe('REMOTE_AUTH');
    await storage.close();
  });
});
