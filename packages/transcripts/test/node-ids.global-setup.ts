// Runs in Node before the browser tests: mirrors the parity transcripts with node-fs and hands
// their branch tips to transcripts.browser.test.ts (`inject('transcriptTips')`), which must
// find the very same ids in Chromium. Derived in the run, so no commit id is written down.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNodeMirror } from '@entity-git/node-fs';
import type { TestProject } from 'vitest/node';
import { parseTranscript, TranscriptDag } from '../src/index.js';
import { parityClaude, parityLog, PARITY_LOG, PARITY_SESSION } from './parity-fixture.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** session id → branch → commit id, as node-fs mirrored the parity transcripts. */
    transcriptTips: Record<string, Record<string, string>>;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  const dag = new TranscriptDag();
  const sessions = [
    ...parseTranscript(parityClaude(), 'claude-code', PARITY_SESSION).sessions,
    ...parseTranscript(parityLog(), 'messages', PARITY_LOG).sessions,
  ];
  for (const s of sessions) dag.set(s);
  const root = mkdtempSync(join(tmpdir(), 'eg-transcripts-parity-'));
  try {
    const mirror = createNodeMirror({ dag, root });
    const tips: Record<string, Record<string, string>> = {};
    for (const s of sessions) {
      await mirror.sync(s.session.id);
      tips[s.session.id] = Object.fromEntries((await mirror.branches(s.session.id)).map((b) => [b.name, b.commit]));
    }
    project.provide('transcriptTips', tips);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
