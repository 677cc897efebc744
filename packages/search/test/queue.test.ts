import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createMirrorService, type SyncResult } from '@entity-git/core';
import { describe, expect, it } from 'vitest';
import { addTurn, expectEqualToReindex, git, goldens, indexOpener, placeOf, tempDir } from './helpers.js';

const indexOf = indexOpener();

describe("the index fed from a sync's result", () => {
  it('a turn carries its messages: the index reads no repository and equals a reindex', async () => {
    const { dag, root, mirror } = await goldens('golden-1');
    const index = indexOf(root);
    await index.afterSync(await mirror.sync('golden-1'));
    const dir = join(root, 'golden-1');
    const from = git(dir, 'rev-parse', 'main').trim();
    await addTurn(dag, 'golden-1', 'a6', 'z', 'zebra crossing');
    const result = await mirror.sync('golden-1');
    const tip = git(dir, 'rev-parse', 'main').trim();
    const files = git(dir, 'ls-tree', '-r', 'main', 'messages').trim().split('\n');
    const blob = (name: string) => files.find((f) => f.endsWith(name))!.split(/\s+/)[2];
    expect(
      result.extendedBranches?.map((b) => ({ ...b, messages: b.messages.map((m) => ({ ...m, node: m.node.id })) })),
    ).toEqual([
      {
        name: 'main',
        from,
        tip,
        messages: [
          { blob: blob('-u-zu.json'), node: 'zu', turn: 4, commit: tip },
          { blob: blob('-a-za.json'), node: 'za', turn: 4, commit: tip },
        ],
      },
    ]);
    expect(files.filter((f) => /-(u-zu|a-za)\.json$/.test(f))).toHaveLength(2);
    // The repository out of reach: the update needs none of it.
    renameSync(dir, `${dir}.away`);
    expect(await index.afterSync(result)).toEqual({ sessions: 1, added: 2, removed: 0 });
    renameSync(`${dir}.away`, dir);
    expect((await index.search({ text: 'zebra', branch: 'main' })).hits.map(placeOf)).toEqual([
      'golden-1/za assistant main#4 [main]',
      'golden-1/zu user main#4 [main]',
    ]);
    await expectEqualToReindex(indexOf, root, index);
  });

  it('a turn past the bytes a result carries carries none, and is read from the repository', async () => {
    const { dag, root, mirror } = await goldens('golden-1');
    const index = indexOf(root);
    await index.afterSync(await mirror.sync('golden-1'));
    // A tool output of 2 MB: past CARRIED_BYTES (1 MiB), so the sync parses and holds none of it.
    await addTurn(dag, 'golden-1', 'a6', 'w', `walrus ${'w'.repeat(2 << 20)}`);
    const result = await mirror.sync('golden-1');
    expect(result.extendedBranches).toBeUndefined();
    expect(await index.afterSync(result)).toEqual({ sessions: 1, added: 2, removed: 0 });
    expect((await index.search({ text: 'walrus', branch: 'main' })).hits.map(placeOf)).toEqual([
      'golden-1/wa assistant main#4 [main]',
      'golden-1/wu user main#4 [main]',
    ]);
    await expectEqualToReindex(indexOf, root, index);
  });

  it('a result that does not start from the tips the index holds is read from the repository', async () => {
    const { dag, root, mirror } = await goldens('golden-1');
    const index = indexOf(root);
    await index.afterSync(await mirror.sync('golden-1'));
    await addTurn(dag, 'golden-1', 'a6', 'y', 'yak');
    const missed = await mirror.sync('golden-1'); // never given to the index
    await addTurn(dag, 'golden-1', 'ya', 'z', 'zebra');
    const next = await mirror.sync('golden-1');
    expect(next.extendedBranches?.[0]?.from).toBe(missed.extendedBranches?.[0]?.tip);
    expect(await index.afterSync(next)).toEqual({ sessions: 1, added: 4, removed: 0 });
    expect((await index.search({ text: 'yak', branch: 'main' })).hits.map(placeOf)).toEqual([
      'golden-1/ya assistant main#4 [main]',
      'golden-1/yu user main#4 [main]',
    ]);
    await expectEqualToReindex(indexOf, root, index);
  });
});

describe('the queue of updates (attach, enqueue, flush)', () => {
  it('holds the updates of several syncs until the flush, then has them all, in order, in one go', async () => {
    const { dag, root, mirror } = await goldens('golden-1', 'golden-2');
    const index = indexOf(root, { batchMs: 60_000 });
    for (const id of ['golden-1', 'golden-2']) await index.update(id);
    const service = createMirrorService({ mirror });
    const errors: unknown[] = [];
    index.attach(service, (_s, e) => errors.push(e));
    await addTurn(dag, 'golden-1', 'a6', 'p', 'pelican one');
    service.notify('golden-1');
    await service.drain();
    await addTurn(dag, 'golden-2', 'a6', 'p', 'pelican two');
    service.notify('golden-2');
    await service.drain();
    await addTurn(dag, 'golden-1', 'pa', 'q', 'pelican three');
    service.notify('golden-1');
    await service.drain();
    // Synced and committed, not yet in the index: the lag is a minute.
    expect(git(join(root, 'golden-1'), 'log', '-1', '--format=%s', 'main').trim()).toBe('turn 5: Ask pelican three?');
    expect((await index.search({ text: 'pelican', branch: 'main' })).hits).toEqual([]);
    expect(await index.flush()).toEqual({ carried: 3, read: 0 });
    expect(errors).toEqual([]);
    // Newest first: the order the syncs were queued in.
    expect((await index.search({ text: 'pelican', branch: 'main' })).hits.map(placeOf)).toEqual([
      'golden-1/qa assistant main#5 [main]',
      'golden-1/qu user main#5 [main]',
      'golden-2/pa assistant main#4 [main]',
      'golden-2/pu user main#4 [main]',
      'golden-1/pa assistant main#4 [main]',
      'golden-1/pu user main#4 [main]',
    ]);
    await service.close();
    await expectEqualToReindex(indexOf, root, index);
  });

  it('flushes by itself within batchMs, and applies what is queued on close', async () => {
    const { dag, root, mirror } = await goldens('golden-1');
    const index = indexOf(root, { batchMs: 5 });
    await index.update('golden-1');
    await addTurn(dag, 'golden-1', 'a6', 'p', 'pelican');
    index.enqueue(await mirror.sync('golden-1'));
    // No flush asked for: the queue's own timer applies it (after the write thread has started).
    while ((await index.search({ text: 'pelican', branch: 'main' })).hits.length === 0)
      await new Promise((r) => setTimeout(r, 20));
    expect((await index.search({ text: 'pelican', branch: 'main' })).hits).toHaveLength(2);

    const slow = indexOf(root, { file: join(tempDir(), 'slow.db'), batchMs: 60_000 });
    await slow.update('golden-1');
    await addTurn(dag, 'golden-1', 'pa', 'q', 'quail');
    const result = await mirror.sync('golden-1');
    slow.enqueue(result);
    slow.close();
    const reopened = indexOf(root, { file: slow.file });
    expect((await reopened.search({ text: 'quail', branch: 'main' })).hits.map(placeOf)).toEqual([
      'golden-1/qa assistant main#5 [main]',
      'golden-1/qu user main#5 [main]',
    ]);
  });

  it('a failed update in a batch fails neither the others nor a sync; it is reported with its code', async () => {
    const { dag, root, mirror } = await goldens('golden-1', 'golden-2');
    const index = indexOf(root, { batchMs: 60_000 });
    await index.update('golden-1'); // golden-2 is unknown: its update reads the repository
    const errors: [string, string][] = [];
    const onError = (s: string, e: { code: string }) => errors.push([s, e.code]);
    await addTurn(dag, 'golden-1', 'a6', 'p', 'pelican');
    await addTurn(dag, 'golden-2', 'a6', 'p', 'pelican');
    const results: SyncResult[] = [await mirror.sync('golden-1'), await mirror.sync('golden-2')];
    writeFileSync(join(root, 'golden-2', '.git', 'refs', 'heads', 'main'), 'not a commit id\n');
    index.enqueue(results[1]!, onError);
    index.enqueue(results[0]!, onError);
    await index.settle();
    expect(errors).toEqual([['golden-2', 'REF_CORRUPT']]);
    expect((await index.search({ text: 'pelican', allBranches: true })).hits.map(placeOf)).toEqual([
      'golden-1/pa assistant main#4 [main]',
      'golden-1/pu user main#4 [main]',
    ]);
  });
});
