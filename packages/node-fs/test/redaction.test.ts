import { createMirror, MemoryDag, Redactor, repositoryAt, scanRepository } from '@entity-git/core';
import { memoryStorage } from '@entity-git/git';
import { createNodeMirror, nodeStorage } from '@entity-git/node-fs';
import { FAKE_SECRETS, REDACTED_TIPS, SECRET_SESSION, secretNodes, writeSecretSession } from '@entity-git/test-utils';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, gitBytes, tempDir } from './helpers.js';

const SID = SECRET_SESSION.id;

/** Every form a fake secret could take in an object: as it is, JSON-escaped, and a private key's lines. */
function needles(): string[] {
  const out = new Set<string>();
  for (const s of Object.values(FAKE_SECRETS)) {
    out.add(s);
    out.add(JSON.stringify(s).slice(1, -1));
    for (const line of s.split('\n')) if (line.length >= 40 && !line.startsWith('-----')) out.add(line);
  }
  return [...out];
}

async function mirrored(options: { redaction?: false } = {}) {
  const dag = new MemoryDag();
  await writeSecretSession(dag);
  const mirror = createNodeMirror({ dag, root: tempDir('eg-redact-'), ...options });
  await mirror.sync(SID);
  return { dag, mirror, dir: mirror.repoPath(SID) };
}

const tipsOf = (dir: string) =>
  Object.fromEntries(
    git(dir, 'for-each-ref', '--format=%(refname:short) %(objectname)', 'refs/heads')
      .trim()
      .split('\n')
      .map((l) => l.split(' ')),
  );

describe('redaction on node-fs', () => {
  it('leaves no fake secret in any object, in any form, and native git finds the repository sound', async () => {
    const { dir } = await mirrored();
    const all = gitBytes(dir, 'cat-file', '--batch-all-objects', '--batch').toString('latin1');
    expect(all.length).toBeGreaterThan(1000);
    for (const needle of needles()) expect(all.includes(needle), needle.slice(0, 24)).toBe(false);
    for (const rule of Object.keys(FAKE_SECRETS)) expect(all).toContain(`[REDACTED:${rule}]`);
    git(dir, 'fsck', '--strict');
    expect(git(dir, 'status', '--porcelain')).toBe('');
    // The working tree holds what the objects hold.
    expect(git(dir, 'grep', '-c', 'REDACTED', 'HEAD', '--', 'messages').trim()).not.toBe('');
  }, 120_000);

  it('writes the golden ids (equal in Chromium), the same in two roots and on a memory storage', async () => {
    const a = await mirrored();
    const b = await mirrored();
    expect(tipsOf(a.dir)).toEqual(REDACTED_TIPS);
    expect(tipsOf(b.dir)).toEqual(REDACTED_TIPS);
    const dag = new MemoryDag();
    await writeSecretSession(dag);
    const memory = createMirror({ dag, storage: memoryStorage(), root: '/m' });
    await memory.sync(SID);
    expect(Object.fromEntries((await memory.branches(SID)).map((x) => [x.name, x.commit]))).toEqual(REDACTED_TIPS);
    expect(await a.mirror.verify(SID)).toEqual({ sessionId: SID, ok: true, differences: [] });
  }, 120_000);

  it('says in each commit message how many secrets were redacted, by rule; the subject is redacted', async () => {
    const { dir } = await mirrored();
    const main = git(dir, 'log', '--format=%B%x00', 'main').split('\0\n');
    expect(main[1]).toMatch(/^turn 1: Deploy using \[REDACTED:github\] and key \[REDACTED:aws\] please\n/);
    expect(main[1]).toContain('\nredacted: aws, database-connection-string, github, npm × 2, privatekey\n');
    expect(main[0]).toContain('\nredacted: basicauth, openai, slack\n');
    const retry = git(dir, 'log', '-1', '--format=%B', 'retry-a3r');
    expect(retry).toContain('\nredacted: anthropic, basicauth, gitlab, slack\n');
    const meta = git(dir, 'show', 'refs/entity-git/meta:session.json');
    expect(JSON.parse(meta)).toMatchObject({
      title: 'Deploy with [REDACTED:github]',
      metadata: { note: 'backup key [REDACTED:sendgrid]' },
    });
  }, 120_000);

  it('never touches the DAG', async () => {
    const { dag } = await mirrored();
    const nodes = [];
    for await (const n of dag.nodesAfter(SID)) nodes.push(n);
    expect(nodes).toEqual(secretNodes());
    expect(await dag.getSession(SID)).toMatchObject({ title: SECRET_SESSION.title, metadata: SECRET_SESSION.metadata });
  }, 120_000);

  it('redaction: false writes the secrets as they are, under other ids', async () => {
    const { dir } = await mirrored({ redaction: false });
    expect(tipsOf(dir).main).not.toBe(REDACTED_TIPS.main);
    const all = gitBytes(dir, 'cat-file', '--batch-all-objects', '--batch').toString('latin1');
    expect(all).toContain(FAKE_SECRETS.github);
  }, 120_000);

  it("redacts the user's own patterns, and refuses a bad one with INVALID_OPTION", async () => {
    const dag = new MemoryDag();
    await dag.createSession({ id: 'p', created_at: 1779600000 });
    await dag.addNode({ ...secretNodes('p')[1]!, predecessor: null, content: 'see TICKET-4711 and TICKET-99', seq: 1 });
    const mirror = createNodeMirror({
      dag,
      root: tempDir('eg-redact-'),
      redaction: { patterns: [{ name: 'ticket', pattern: 'TICKET-[0-9]+' }] },
    });
    await mirror.sync('p');
    const dir = mirror.repoPath('p');
    expect(git(dir, 'log', '-1', '--format=%B')).toMatch(
      /^turn 1: see \[REDACTED:ticket\] and \[REDACTED:ticket\]\n\nredacted: ticket × 2\n/,
    );
    for (const bad of [
      { name: 'Bad Name', pattern: 'x' },
      { name: 'ok', pattern: '(' },
      { name: 'ok', pattern: 'x', flags: 'g' },
    ])
      expect(() => createNodeMirror({ dag, root: tempDir(), redaction: { patterns: [bad] } })).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTION' }),
      );
    expect(() => new Redactor({ preset: 'all' as 'none' })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION' }),
    );
  }, 120_000);

  it('redacts the same input to the same text, and a second pass changes nothing', async () => {
    const r = new Redactor();
    const text = `a ${FAKE_SECRETS.github} b ${FAKE_SECRETS.privatekey} c`;
    const once = await r.redactText(text);
    expect(once).toBe('a [REDACTED:github] b [REDACTED:privatekey] c');
    expect(await r.redactText(text)).toBe(once);
    expect(await r.redactText(once)).toBe(once);
  });
});

describe('scanRepository', () => {
  it('finds nothing in a redacted repository, and finds a secret planted in an old commit by plain git', async () => {
    const { dir, mirror } = await mirrored();
    const redactor = new Redactor();
    const repo = repositoryAt(nodeStorage(), dir, SID);
    expect(await scanRepository(repo, redactor)).toEqual([]);
    // Plain git: a commit on main that adds a file holding a key, then one that removes it.
    git(dir, 'config', 'user.name', 'someone');
    git(dir, 'config', 'user.email', 'someone@example.com');
    writeFileSync(join(dir, 'notes.txt'), `first line\nexport GITHUB_TOKEN=${FAKE_SECRETS.github}\n`);
    git(dir, 'add', 'notes.txt');
    git(dir, 'commit', '-q', '-m', 'notes');
    const planted = git(dir, 'rev-parse', 'HEAD').trim();
    git(dir, 'rm', '-q', 'notes.txt');
    git(dir, 'commit', '-q', '-m', 'remove the notes');
    const found = await scanRepository(repositoryAt(nodeStorage(), dir, SID), redactor);
    expect(found).toEqual([{ rule: 'github', session: SID, commit: planted, file: 'notes.txt', line: 2 }]);
    expect(mirror.repoPath(SID)).toBe(dir);
  }, 120_000);

  it('finds every secret of an unredacted repository, in files, JSON escapes and commit messages', async () => {
    const { dir } = await mirrored({ redaction: false });
    const found = await scanRepository(repositoryAt(nodeStorage(), dir, SID), new Redactor());
    const rules = new Set(found.map((f) => f.rule));
    expect([...rules].sort()).toEqual(Object.keys(FAKE_SECRETS).sort());
    // The private key sits in a JSON string with its line breaks escaped.
    expect(found).toContainEqual(
      expect.objectContaining({ rule: 'privatekey', file: 'messages/000004-t-t1.json', line: expect.any(Number) }),
    );
    expect(found).toContainEqual(expect.objectContaining({ rule: 'github', file: null, line: 1 }));
  }, 120_000);
});
