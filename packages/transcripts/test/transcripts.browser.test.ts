import { createBrowserMirror } from '@entity-git/browser-fs';
import { describe, expect, inject, it } from 'vitest';
import { parseTranscript, TranscriptDag } from '../src/index.js';
import { parityClaude, parityLog, PARITY_LOG, PARITY_SESSION } from './parity-fixture.js';

const nodeTips = inject('transcriptTips');

describe('transcripts in Chromium', () => {
  it('mirror to exactly the commit ids node-fs gives the same bytes', async () => {
    // As the replay app's offline mode reads a file the user picked: bytes from a Blob.
    const bytes = async (b: Uint8Array) => new Uint8Array(await new Blob([b]).arrayBuffer());
    const sessions = [
      ...parseTranscript(await bytes(parityClaude()), 'claude-code', PARITY_SESSION).sessions,
      ...parseTranscript(await bytes(parityLog()), 'messages', PARITY_LOG).sessions,
    ];
    expect(sessions.map((s) => s.session.id).sort()).toEqual(Object.keys(nodeTips).sort());
    const dag = new TranscriptDag();
    for (const s of sessions) dag.set(s);
    const mirror = createBrowserMirror({
      dag,
      fsName: `transcripts-${Date.now()}-${Math.random().toString(36).slice(2)}`,
    });
    for (const s of sessions) {
      await mirror.sync(s.session.id);
      const tips = Object.fromEntries((await mirror.branches(s.session.id)).map((b) => [b.name, b.commit]));
      expect(tips).toEqual(nodeTips[s.session.id]);
    }
    // The Claude Code session: main, the regenerated reply, the edited prompt.
    expect(Object.keys(nodeTips[PARITY_SESSION]!).length).toBe(3);
    await mirror.storage.close();
  });
});
