// Two storages of one page on one file system and one DAG database stand for two tabs here:
// they share IndexedDB and the origin's Web Locks exactly as tabs do, and LightningFS treats
// them as it treats tabs (one at a time, the tree reloaded on taking over). Real tabs and real
// reloads are driven from Node in pages.test.ts.
import { browserStorage, createBrowserMirror, openIdbDag } from '@entity-git/browser-fs';
import { MemoryDag, type DagWriter } from '@entity-git/core';
import { ObjectStore, RefStore, Store } from '@entity-git/git';
import { GOLDEN_SESSION, writeGolden } from '@entity-git/test-utils';
import { describe, expect, it } from 'vitest';
import { freshDag, GOLDEN_TIPS, unique } from './helpers.js';

const SID = GOLDEN_SESSION.id;
const who = { name: 'test', email: 'test@localhost' };

async function addTurn(dag: DagWriter, k: number, after: string): Promise<string> {
  await dag.appendNode({
    id: `u${k}x`,
    session_id: SID,
    role: 'user',
    content: `question ${k}`,
    predecessor: after,
    created_at: 1779600000 + 10 * k,
  });
  await dag.appendNode({
    id: `a${k}x`,
    session_id: SID,
    role: 'assistant',
    content: `answer ${k}`,
    predecessor: `u${k}x`,
    created_at: 1779600001 + 10 * k,
  });
  return `a${k}x`;
}

describe('two storages of one page (as two tabs) on one file system', () => {
  it('syncing one session at once: every commit written once, none lost, no lock timeout, ids as an undisturbed run', async () => {
    const dbName = unique('dag');
    const fsName = unique('fs');
    const dagA = await openIdbDag({ name: dbName });
    const dagB = await openIdbDag({ name: dbName });
    await writeGolden(dagA);
    await dagA.setHead(SID, 'a7');
    const a = createBrowserMirror({ dag: dagA, fsName, syncLock: { timeoutMs: 30_000 } });
    const b = createBrowserMirror({ dag: dagB, fsName, syncLock: { timeoutMs: 30_000 } });
    const first = await Promise.all([a.sync(SID), b.sync(SID)]);
    expect(first.map((r) => r.commitsWritten).sort()).toEqual([0, 5]);
    let tip = 'a7';
    const rounds = 4;
    for (let k = 1; k <= rounds; k++) {
      tip = await addTurn(k % 2 ? dagA : dagB, k, tip);
      const results = await Promise.all([a.sync(SID), b.sync(SID)]);
      expect(results.reduce((n, r) => n + r.commitsWritten, 0)).toBe(1);
    }
    const log = await b.log(SID, { branch: 'fork-u4' });
    expect(log.map((c) => c.turn)).toEqual(Array.from({ length: rounds + 2 }, (_, i) => rounds + 2 - i));
    const reflog = (await a.storage.fs.readFile(`${a.repoPath(SID)}/.git/logs/refs/heads/fork-u4`, 'utf8')) as string;
    expect(reflog.trim().split('\n')).toHaveLength(rounds + 1);
    expect((await a.verify(SID)).ok).toBe(true);
    expect((await b.verify(SID)).ok).toBe(true);

    // The same DAG, mirrored alone.
    const alone = new MemoryDag();
    for await (const n of dagA.nodesAfter(SID)) {
      if (!(await alone.getSession(SID))) await alone.createSession({ ...(await dagA.getSession(SID))!, head: null });
      await alone.addNode(n);
    }
    await alone.setHead(SID, await dagA.getHead(SID));
    const undisturbed = createBrowserMirror({ dag: alone, fsName: unique('fs') });
    await undisturbed.sync(SID);
    expect(await b.branches(SID)).toEqual(await undisturbed.branches(SID));
    for (const m of [a, b, undisturbed]) await m.storage.close();
    await dagA.close();
    await dagB.close();
  });

  it('a storage opened later on the same file system sees every ref, and verify is clean', async () => {
    const fsName = unique('fs');
    const dag = await freshDag();
    await writeGolden(dag);
    const first = createBrowserMirror({ dag, fsName });
    await first.sync(SID);
    const again = createBrowserMirror({ dag, fsName });
    expect(Object.fromEntries((await again.branches(SID)).map((x) => [x.name, x.commit]))).toEqual(GOLDEN_TIPS);
    expect(await again.verify(SID)).toEqual({ sessionId: SID, ok: true, differences: [] });
    await first.storage.close();
    await again.storage.close();
  });

  it('a lock file left by a storage that is gone is taken over; a live one is waited for', async () => {
    const fsName = unique('fs');
    const gone = browserStorage({ fsName });
    const live = browserStorage({ fsName });
    const mine = browserStorage({ fsName });
    const gitdir = '/r/.git';
    await new Store(gone).mkdirp(`${gitdir}/refs/heads`);
    expect(await gone.createExclusive(`${gitdir}/refs/heads/main.lock`, `${'a'.repeat(40)}\n`)).toBe(true);
    expect(await live.createExclusive(`${gitdir}/refs/heads/dev.lock`, `${'b'.repeat(40)}\n`)).toBe(true);
    // `gone` holds its owner lock until closed (a reload or a closed tab releases it the same way).
    expect(await mine.createExclusive(`${gitdir}/refs/heads/main.lock`, 'x')).toBe(false);
    await gone.close();
    const refs = new RefStore(new Store(mine), gitdir, { timeoutMs: 300 });
    await refs.update('refs/heads/main', 'c'.repeat(40), { old: null, reflog: { who, message: 'after a dead tab' } });
    expect(await refs.resolve('refs/heads/main')).toBe('c'.repeat(40));
    await expect(
      refs.update('refs/heads/dev', 'c'.repeat(40), { old: null, reflog: { who, message: 'x' } }),
    ).rejects.toMatchObject({ code: 'REF_LOCKED' });
    // Not a lock file: never taken over, whoever made it.
    await new ObjectStore(new Store(mine), gitdir).write('blob', new TextEncoder().encode('kept'));
    await live.close();
    await mine.close();
  });

  it('a sync waiting longer than syncLock.timeoutMs for another holder is LOCK_TIMEOUT', async () => {
    const fsName = unique('fs');
    const holder = browserStorage({ fsName });
    const waiter = browserStorage({ fsName, syncLock: { timeoutMs: 100 } });
    let release!: () => void;
    const held = holder.withLock(
      '/sessions/s/.git/entity-git/sync.lock',
      () => new Promise<void>((r) => (release = r)),
    );
    await new Promise((r) => setTimeout(r, 20));
    await expect(waiter.withLock('/sessions/s/.git/entity-git/sync.lock', async () => 1)).rejects.toMatchObject({
      code: 'LOCK_TIMEOUT',
    });
    expect(await waiter.withLock('/sessions/other/.git/entity-git/sync.lock', async () => 2)).toBe(2);
    const impatient = browserStorage({ fsName, syncLock: { timeoutMs: 0 } });
    await expect(impatient.withLock('/sessions/s/.git/entity-git/sync.lock', async () => 1)).rejects.toMatchObject({
      code: 'LOCK_TIMEOUT',
    });
    expect(await impatient.withLock('/sessions/other/.git/entity-git/sync.lock', async () => 4)).toBe(4);
    await impatient.close();
    release();
    await held;
    expect(await waiter.withLock('/sessions/s/.git/entity-git/sync.lock', async () => 3)).toBe(3);
    await holder.close();
    await waiter.close();
  });
});
