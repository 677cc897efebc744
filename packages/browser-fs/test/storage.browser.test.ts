import {
  browserStorage,
  createBrowserMirror,
  DRIVER_NAME,
  fsDatabaseName,
  openIdbDag,
  requestPersistentStorage,
} from '@entity-git/browser-fs';
import { describe, expect, it } from 'vitest';
import { freshDag, freshStorage, unique } from './helpers.js';

describe('browserStorage', () => {
  it('is a frozen adapter over frozen options, named by DRIVER_NAME, objects and refs only', async () => {
    const storage = freshStorage({ syncLock: { timeoutMs: 1234 } });
    expect(storage.name).toBe(DRIVER_NAME);
    expect(DRIVER_NAME).toBe('browser-fs');
    expect(storage.workTree).toBe(false);
    expect(storage.codec).toBeUndefined();
    expect(Object.isFrozen(storage)).toBe(true);
    expect(Object.isFrozen(storage.options)).toBe(true);
    expect(storage.options).toEqual({ fsName: storage.options.fsName, syncLockTimeoutMs: 1234 });
    await storage.close();
    await expect(storage.fs.readdir('/')).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    expect(() => browserStorage({ fsName: '' })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
  });

  it('keeps Node semantics where LightningFS differs: ENOTDIR under a file, EISDIR for unlink of a directory', async () => {
    const storage = freshStorage();
    await storage.fs.writeFile('/file', 'x');
    await expect(storage.fs.writeFile('/file/child', 'y')).rejects.toMatchObject({ code: 'ENOTDIR' });
    await expect(storage.fs.mkdir('/file/dir')).rejects.toMatchObject({ code: 'ENOTDIR' });
    await storage.fs.mkdir('/dir');
    await expect(storage.fs.unlink('/dir')).rejects.toMatchObject({ code: 'EISDIR' });
    await expect(storage.fs.mkdir('/dir')).rejects.toMatchObject({ code: 'EEXIST' });
    await expect(storage.fs.mkdir('/none/dir')).rejects.toMatchObject({ code: 'ENOENT' });
    // A view into a larger buffer is stored as its own bytes.
    const big = new Uint8Array([9, 9, 1, 2, 3, 9]);
    await storage.fs.writeFile('/dir/view', big.subarray(2, 5));
    expect(Array.from((await storage.fs.readFile('/dir/view')) as Uint8Array)).toEqual([1, 2, 3]);
    await storage.close();
  });

  it('a storage opened again on the same file system finds what the last one wrote', async () => {
    const fsName = unique('fs');
    const first = browserStorage({ fsName });
    await first.fs.mkdir('/d');
    await first.fs.writeFile('/d/kept', 'x');
    await first.close();
    const reopened = browserStorage({ fsName });
    expect(await reopened.fs.readdir('/d')).toEqual(['kept']);
    expect(await reopened.fs.readFile('/d/kept', 'utf8')).toBe('x');
    await reopened.close();
  });

  it('a DAG database and a file system of the same name do not collide; a foreign database is refused', async () => {
    const name = unique('same');
    const dag = await openIdbDag({ name });
    const mirror = createBrowserMirror({ dag, fsName: name });
    await dag.createSession({ id: 's' });
    await dag.appendNode({ id: 'u', session_id: 's', role: 'user', content: 'hi' });
    await dag.appendNode({ id: 'a', session_id: 's', role: 'assistant', content: 'hello', predecessor: 'u' });
    expect(await mirror.sync('s')).toMatchObject({ commitsWritten: 1 });
    expect((await mirror.verify('s')).ok).toBe(true);
    expect(fsDatabaseName(name)).toBe(`${name}.lightning-fs`);
    expect((await indexedDB.databases()).map((d) => d.name)).toEqual(
      expect.arrayContaining([name, fsDatabaseName(name)]),
    );
    await expect(openIdbDag({ name: fsDatabaseName(name) })).rejects.toMatchObject({ code: 'DB_ERROR' });
    await mirror.storage.close();
    await dag.close();
  });

  it('a sync saves the directory tree once; a verify saves nothing; the turn survives a reopen', async () => {
    const dag = await freshDag();
    const storage = freshStorage();
    const mirror = createBrowserMirror({ dag, storage });
    await dag.createSession({ id: 's' });
    await dag.appendNode({ id: 'u1', session_id: 's', role: 'user', content: 'one' });
    await dag.appendNode({ id: 'a1', session_id: 's', role: 'assistant', content: 'reply one', predecessor: 'u1' });
    expect(await mirror.sync('s')).toMatchObject({ commitsWritten: 1 });
    // Every save of the tree (each writes the whole directory tree of the origin's file system),
    // counted; LightningFS's own save after 500 ms idle is left out, so only the locks' saves count.
    const backend = (
      storage.lightningFs.promises as unknown as {
        _backend: { _saveSuperblock: () => Promise<void>; saveSuperblock: () => void };
      }
    )._backend;
    const save = backend._saveSuperblock.bind(backend);
    let saves = 0;
    backend._saveSuperblock = async () => {
      saves++;
      await save();
    };
    backend.saveSuperblock = () => undefined;
    await dag.appendNode({ id: 'u2', session_id: 's', role: 'user', content: 'two', predecessor: 'a1' });
    await dag.appendNode({ id: 'a2', session_id: 's', role: 'assistant', content: 'reply two', predecessor: 'u2' });
    expect(await mirror.sync('s')).toMatchObject({ commitsWritten: 1 });
    expect(saves).toBe(1);
    saves = 0;
    expect((await mirror.verify('s')).ok).toBe(true);
    expect(saves).toBe(0);
    const shas = (await mirror.log('s')).map((c) => c.sha);
    expect(shas).toHaveLength(2);
    await storage.close();
    const reopened = createBrowserMirror({ dag, fsName: storage.options.fsName });
    expect(await reopened.sync('s')).toMatchObject({ commitsWritten: 0 });
    expect((await reopened.log('s')).map((c) => c.sha)).toEqual(shas);
    await reopened.storage.close();
    await dag.close();
  });

  it('requestPersistentStorage asks navigator.storage.persist() and reports usage and quota', async () => {
    const report = await requestPersistentStorage();
    expect(report.supported).toBe(true);
    expect(typeof report.persisted).toBe('boolean');
    expect(report.usage).toEqual(expect.any(Number));
    expect(report.quota).toBeGreaterThan(0);
  });
});
