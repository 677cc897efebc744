// push scans what it would send: a secret planted by plain git in an old commit is refused with
// SECRETS_FOUND and nothing reaches the host; allowSecrets sends it; only commits the host lacks are scanned.
import { MemoryDag } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { pushSession } from '@entity-git/remote';
import { FAKE_SECRETS, writeGolden } from '@entity-git/test-utils';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from '../../node-fs/test/helpers.js';
import {
  addTurn,
  failure,
  goldenMachine,
  lsRemote,
  remoteOf,
  server,
  SID,
  storage,
  useGitHttpServer,
} from './remote-helpers.js';

useGitHttpServer();

describe('push refuses secrets', () => {
  it('refuses a secret planted in an old commit by plain git, sends nothing, and sends it with allowSecrets', async () => {
    const { root, dir } = await goldenMachine();
    server.createRepo(`sessions/${SID}.git`);
    git(dir, 'config', 'user.name', 'someone');
    git(dir, 'config', 'user.email', 'someone@example.com');
    git(dir, 'checkout', '-q', 'main');
    writeFileSync(join(dir, 'notes.txt'), `deploy with\n${FAKE_SECRETS.slack}\n`);
    git(dir, 'add', 'notes.txt');
    git(dir, 'commit', '-q', '-m', 'notes');
    const planted = git(dir, 'rev-parse', 'HEAD').trim();
    git(dir, 'rm', '-q', 'notes.txt');
    git(dir, 'commit', '-q', '-m', 'remove the notes');
    const err = await failure(pushSession({ remote: remoteOf(), storage, root, sessionId: SID }));
    expect(err.code).toBe('SECRETS_FOUND');
    expect(err.data.findings).toEqual([{ rule: 'slack', session: SID, commit: planted, file: 'notes.txt', line: 2 }]);
    expect(err.message).not.toContain(FAKE_SECRETS.slack);
    expect(await lsRemote(SID)).toEqual({});
    const result = await pushSession({ remote: remoteOf(), storage, root, sessionId: SID, allowSecrets: true });
    expect(result.pushed.map((p) => p.ref)).toContain('refs/heads/main');
    expect((await lsRemote(SID))['refs/heads/main']).toBe(git(dir, 'rev-parse', 'main').trim());
  }, 120_000);

  it('scans only the commits the host lacks: a new turn with a secret is refused, the old clean ones are not reported', async () => {
    const dag = new MemoryDag();
    await writeGolden(dag, { sessionId: 'sx' });
    const root = tempDir();
    // A mirror that does not redact: what it writes is what the push must catch.
    const mirror = createNodeMirror({ dag, root, redaction: false });
    await mirror.sync('sx');
    server.createRepo('sessions/sx.git');
    await pushSession({ remote: remoteOf(), storage, root, sessionId: 'sx' });
    await dag.setHead('sx', null);
    const tip = await addTurn(dag, 'sx', 1, 'a7');
    await dag.fillNode('sx', tip, `token ${FAKE_SECRETS.npm}`);
    await mirror.sync('sx');
    const err = await failure(pushSession({ remote: remoteOf(), storage, root, sessionId: 'sx' }));
    expect(err.code).toBe('SECRETS_FOUND');
    const findings = err.data.findings as { rule: string; commit: string; file: string | null }[];
    const newTip = git(mirror.repoPath('sx'), 'rev-parse', 'HEAD').trim();
    // The reply is in the commit message's `assistant:` line and in its file; nothing older is reported.
    expect(findings).toEqual([
      { rule: 'npm', session: 'sx', commit: newTip, file: null, line: 3 },
      { rule: 'npm', session: 'sx', commit: newTip, file: 'messages/000021-a-x-a1.json', line: 3 },
    ]);
  }, 120_000);
});
