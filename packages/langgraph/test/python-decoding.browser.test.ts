// In Chromium: Python-written checkpoints copied into IndexedDB, decoded by the package's
// TypedDecoder (msgpack extension types, the JSON fallback, `lc` objects) and mirrored by
// @entity-git/browser-fs, give the commit ids node-fs gives from the SqliteSaver file.
import { createBrowserMirror } from '@entity-git/browser-fs';
import { describe, expect, inject, it } from 'vitest';
import {
  checkpointRowTuple,
  createLangGraphDag,
  TypedDecoder,
  type CheckpointConfig,
  type CheckpointLister,
  type CheckpointRow,
  type CheckpointTupleLike,
} from '../src/index.js';
import type { CopiedRow } from './python-ids.global-setup.js';

const bytes = (b64: string) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));

/** The rows put into an IndexedDB object store and read back, as a page keeps a copy. */
async function indexedDbCopy(rows: CopiedRow[]): Promise<CheckpointRow[]> {
  const name = `checkpoints-${Math.random().toString(36).slice(2)}`;
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const open = indexedDB.open(name, 1);
    open.onupgradeneeded = () =>
      open.result.createObjectStore('checkpoints', { keyPath: ['thread_id', 'checkpoint_id'] });
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error);
  });
  const tx = db.transaction('checkpoints', 'readwrite');
  for (const r of rows)
    tx.objectStore('checkpoints').put({ ...r, checkpoint: bytes(r.checkpoint), metadata: bytes(r.metadata) });
  await new Promise((resolve, reject) => {
    tx.oncomplete = resolve;
    tx.onerror = () => reject(tx.error);
  });
  const all = await new Promise<CheckpointRow[]>((resolve, reject) => {
    const get = db.transaction('checkpoints').objectStore('checkpoints').getAll();
    get.onsuccess = () => resolve(get.result as CheckpointRow[]);
    get.onerror = () => reject(get.error);
  });
  db.close();
  return all;
}

/** A lister over the copied rows, newest first, as LangGraph's savers list. */
class CopiedCheckpoints implements CheckpointLister {
  constructor(
    private readonly rows: CheckpointRow[],
    private readonly decoder: TypedDecoder,
  ) {}
  async *list(config: CheckpointConfig, options?: { limit?: number }): AsyncIterable<CheckpointTupleLike> {
    const thread = config.configurable?.thread_id;
    const rows = this.rows
      .filter((r) => thread === undefined || r.thread_id === thread)
      .sort((a, b) => (a.checkpoint_id < b.checkpoint_id ? 1 : a.checkpoint_id > b.checkpoint_id ? -1 : 0))
      .slice(0, options?.limit ?? Number.POSITIVE_INFINITY);
    for (const r of rows) yield checkpointRowTuple(r, this.decoder);
  }
}

describe('Python LangGraph checkpoints in Chromium', () => {
  it('decode from an IndexedDB copy into the commit ids node-fs gives from the SqliteSaver file', async () => {
    const expected = inject('pythonTips');
    expect(Object.keys(expected).sort()).toEqual(['py-json', 'py-odd', 'py-travel']);
    expect(Object.keys(expected['py-travel']!).sort()).toEqual(['fork-h3', 'main', 'retry-a4']);
    const unknown: string[] = [];
    const decoder = new TypedDecoder({ onUnknownType: (t) => unknown.push(t) });
    const dag = createLangGraphDag({
      saver: new CopiedCheckpoints(await indexedDbCopy(inject('pythonRows')), decoder),
    });
    const mirror = createBrowserMirror({ dag, fsName: `langgraph-${Math.random().toString(36).slice(2)}` });
    const tips: Record<string, Record<string, string>> = {};
    for (const thread of await dag.listSessions()) {
      await mirror.sync(thread);
      tips[thread] = Object.fromEntries((await mirror.branches(thread)).map((b) => [b.name, b.commit]));
    }
    expect(tips).toEqual(expected);
    expect(unknown).toEqual(['myapp.models.Weather']);
    const [odd] = await mirror.log('py-odd', { branch: 'main' });
    const turn = await mirror.read('py-odd', odd!.sha);
    expect(turn.messages.find((m) => m.id === 'a1')!.metadata).toMatchObject({
      python_types: ['myapp.models.Weather'],
      additional_kwargs: { forecast: { python_type: 'myapp.models.Weather', value: { city: 'Oslo', temp: 18 } } },
    });
    await mirror.storage.close();
  });
});
