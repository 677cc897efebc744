import { createBrowserMirror } from '@entity-git/browser-fs';
import { META_REF, Redactor, repositoryAt, scanRepository } from '@entity-git/core';
import { FAKE_SECRETS, REDACTED_TIPS, SECRET_SESSION, writeSecretSession } from '@entity-git/test-utils';
import { describe, expect, it } from 'vitest';
import { freshDag, unique } from './helpers.js';

const SID = SECRET_SESSION.id;

describe('redaction in Chromium', () => {
  it("loads secretlint's preset in the page and writes node-fs's redacted ids", async () => {
    const dag = await freshDag();
    await writeSecretSession(dag);
    const mirror = createBrowserMirror({ dag, fsName: unique('fs') });
    await mirror.sync(SID);
    const tips = Object.fromEntries((await mirror.branches(SID)).map((b) => [b.name, b.commit]));
    expect(tips).toEqual(REDACTED_TIPS);
    const [turn1] = (await mirror.log(SID, { branch: 'main' })).slice(-1);
    expect(turn1!.subject).toBe('turn 1: Deploy using [REDACTED:github] and key [REDACTED:aws] please');
    // No message file holds a secret: scanned from the objects, as the CLI's scan does.
    const repo = repositoryAt(mirror.storage, mirror.repoPath(SID), SID);
    expect(await scanRepository(repo, new Redactor())).toEqual([]);
    expect(await repo.refs.resolve(META_REF)).toMatch(/^[0-9a-f]{40}$/);
    const view = await mirror.read(SID, tips.main!);
    expect(JSON.stringify(view.messages)).not.toContain(FAKE_SECRETS.npm);
    await mirror.storage.close();
  });
});
