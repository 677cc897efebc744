import { openSqlite } from '@entity-git/sqlite';
import { FAKE_SECRETS, REDACTED_TIPS, SECRET_SESSION, secretNodes } from '@entity-git/test-utils';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitHttpServer, type GitHttpServer } from '../../remote/test/git-http-server.js';
import { git, json, revParseAll, run, tempDir } from './fixture.js';

const SID = SECRET_SESSION.id;
const TOKEN = 'cli-token';
let server: GitHttpServer;
beforeAll(async () => {
  server = await startGitHttpServer({ token: TOKEN, autoCreate: true });
});
afterAll(async () => {
  await server.close();
});

async function secretDb(file: string): Promise<void> {
  const store = await openSqlite({ file });
  try {
    await store.writer.createSession({ ...SECRET_SESSION, head: null });
    for (const { seq: _seq, ...n } of secretNodes()) await store.writer.appendNode(n);
    await store.writer.setHead(SID, SECRET_SESSION.head);
  } finally {
    await store.close();
  }
}

async function synced() {
  const dir = tempDir();
  const db = join(dir, 'dag.db');
  const root = join(dir, 'sessions');
  await secretDb(db);
  expect((await run(['--db', db, '--root', root, 'sync'])).code).toBe(0);
  return { dir, db, root, repo: join(root, SID) };
}

describe('entity-git scan, export and push --allow-secrets', () => {
  it('sync redacts by default (the golden ids); scan finds nothing, then a secret planted by plain git (exit 1)', async () => {
    const { db, root, repo } = await synced();
    const tips = revParseAll(repo);
    expect(tips.main).toBe(REDACTED_TIPS.main);
    expect(tips['retry-a3r']).toBe(REDACTED_TIPS['retry-a3r']);
    const clean = await run(['--db', db, '--root', root, 'scan']);
    expect(clean.code).toBe(0);
    expect(clean.stdout).toBe('scanned 1 repository: no secret found\n');
    git(repo, '-c', 'user.name=u', '-c', 'user.email=u@example.com', 'checkout', '-q', '-b', 'notes', 'main~1');
    writeFileSync(join(repo, 'deploy.env'), `A=1\nB=2\nAWS_ACCESS_KEY_ID=${FAKE_SECRETS.aws}\n`);
    git(repo, 'add', 'deploy.env');
    git(repo, '-c', 'user.name=u', '-c', 'user.email=u@example.com', 'commit', '-q', '-m', 'env');
    const planted = git(repo, 'rev-parse', 'HEAD').trim();
    const found = await run(['--db', db, '--root', root, 'scan', '--session', SID, '--json']);
    expect(found.code).toBe(1);
    expect(JSON.parse(found.stdout)).toEqual({
      ok: false,
      repositories: 1,
      findings: [{ rule: 'aws', session: SID, commit: planted, file: 'deploy.env', line: 3 }],
    });
    const text = await run(['--db', db, '--root', root, 'scan']);
    expect(text.stdout).toBe(`aws\t${SID}\t${planted}\tdeploy.env:3\nscanned 1 repository: 1 secret found\n`);
    expect(text.stdout).not.toContain(FAKE_SECRETS.aws);
    // push refuses it, names it, sends nothing; --allow-secrets sends it.
    const env = { ENTITY_GIT_REMOTE_TOKEN: TOKEN };
    const refused = await run(['--db', db, '--root', root, 'push', '--remote', server.template], { env });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(`${SID} failed (SECRETS_FOUND)`);
    expect(refused.stdout).toContain(`aws in deploy.env of ${planted.slice(0, 12)}, line 3`);
    const pushed = await run(
      ['--db', db, '--root', root, 'push', '--remote', server.template, '--allow-secrets', '--json'],
      {
        env,
      },
    );
    expect(json(pushed)).toMatchObject({ ok: true });
    expect(git(join(server.root, 'sessions', `${SID}.git`), 'rev-parse', 'refs/heads/notes').trim()).toBe(planted);
  }, 180_000);

  it('export writes Markdown, HTML and JSONL of a branch, redacted; a config can turn redaction off', async () => {
    const { dir, db, root } = await synced();
    const md = await run(['--db', db, '--root', root, 'export', SID, '--format', 'md', '--branch', 'retry-a3r']);
    expect(md.code).toBe(0);
    expect(md.stdout).toContain('## Turn 2');
    expect(md.stdout).toContain('Configured; Anthropic key [REDACTED:anthropic], GitLab [REDACTED:gitlab].');
    const out = join(dir, 'out.html');
    const html = await run(['--db', db, '--root', root, 'export', SID, '--format', 'html', '--turn', '1', '-o', out]);
    expect(html).toMatchObject({ code: 0, stdout: '' });
    const page = readFileSync(out, 'utf8');
    expect(page).toContain('<section id="turn-1">');
    expect(page).not.toContain('<section id="turn-2">');
    const jsonl = await run(['--db', db, '--root', root, 'export', SID, '--format', 'jsonl']);
    expect(
      jsonl.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l).id),
    ).toEqual(['s1', 'u1', 'a1', 't1', 't2', 'a2', 'u2', 'a3r']);
    for (const s of Object.values(FAKE_SECRETS))
      for (const o of [md.stdout, page, jsonl.stdout]) expect(o).not.toContain(s);
    const bad = await run(['--db', db, '--root', root, 'export', SID, '--format', 'pdf']);
    expect(bad.code).toBe(2);
    // A config that turns redaction off: the mirror writes the secrets (other ids) and export keeps them.
    const config = join(dir, 'off.json');
    writeFileSync(config, JSON.stringify({ redaction: false }));
    const root2 = join(dir, 'plain');
    expect((await run(['--db', db, '--config', config, '--root', root2, 'sync'])).code).toBe(0);
    expect(revParseAll(join(root2, SID)).main).not.toBe(REDACTED_TIPS.main);
    const raw = await run(['--db', db, '--config', config, '--root', root2, 'export', SID, '--format', 'jsonl']);
    expect(raw.stdout).toContain(JSON.stringify(FAKE_SECRETS.github).slice(1, -1));
    const badConfig = join(dir, 'bad.json');
    writeFileSync(badConfig, JSON.stringify({ redaction: { patterns: [{ name: 'x', pattern: '(' }] } }));
    expect((await run(['--db', db, '--config', badConfig, '--root', root2, 'scan'])).code).toBe(2);
  }, 180_000);
});
