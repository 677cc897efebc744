// The working tree belongs to the mirror (issue #26, items 5 and 6): files deleted or edited by
// hand, and files a lost index left behind across a HEAD switch, are seen by `verify` and repaired
// by `sync`, so that `git status` is clean — judged with native git.
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openSqlite } from '@entity-git/sqlite';
import { GOLDEN_SESSION } from '@entity-git/test-utils';
import { describe, expect, it } from 'vitest';
import { buildDb, git, revParseAll, run, tempDir } from './fixture.js';

describe("the working tree is the mirror's", () => {
  it('meta.json deleted and a message file edited by hand: verify exits 1, sync repairs, git status clean', async () => {
    const dir = tempDir();
    const db = join(dir, 'dag.db');
    await buildDb(db);
    const root = join(dir, 'root');
    expect((await run(['--db', db, '--root', root, 'sync'])).code).toBe(0);
    const repo = join(root, GOLDEN_SESSION.id);
    const before = revParseAll(repo);
    const file = readdirSync(join(repo, 'messages')).sort()[0]!;
    rmSync(join(repo, 'meta.json'));
    writeFileSync(join(repo, 'messages', file), '{"edited":"by hand"}\n');
    writeFileSync(join(repo, 'messages', '999999-u-stray.json'), '{}\n');
    expect(git(repo, 'status', '--porcelain')).not.toBe('');

    const verify = await run(['--db', db, '--root', root, 'verify', '--json']);
    expect(verify.code).toBe(1);
    const details = JSON.parse(verify.stdout)
      .sessions.find((s: { sessionId: string }) => s.sessionId === GOLDEN_SESSION.id)
      .differences.filter((d: { kind: string }) => d.kind === 'worktree-differs')
      .map((d: { detail: string }) => d.detail)
      .join('\n');
    expect(details).toContain('lacks meta.json');
    expect(details).toContain(`other bytes in messages/${file}`);
    expect(details).toContain('holds messages/999999-u-stray.json');

    const sync = await run(['--db', db, '--root', root, 'sync', '--json']);
    expect(sync.code, sync.stderr).toBe(0);
    expect(
      JSON.parse(sync.stdout).sessions.find((s: { sessionId: string }) => s.sessionId === GOLDEN_SESSION.id).action,
    ).toBe('repaired');
    expect(git(repo, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    expect(revParseAll(repo)).toEqual(before);
    expect((await run(['--db', db, '--root', root, 'verify'])).code).toBe(0);
  }, 300_000);

  it('a lost index and a HEAD switch: the files of the previous HEAD are removed, git status clean, verify ok', async () => {
    const dir = tempDir();
    const db = join(dir, 'dag.db');
    const root = join(dir, 'root');
    const S = 'lost-index';
    const store = await openSqlite({ file: db });
    const t = 1779900000;
    await store.writer.createSession({ id: S, created_at: t });
    const add = (id: string, role: 'user' | 'assistant', predecessor: string | null, k: number) =>
      store.writer.appendNode({ id, session_id: S, role, content: `${id} text`, predecessor, created_at: t + k });
    await add('u1', 'user', null, 1);
    await add('a1', 'assistant', 'u1', 2);
    await add('u2', 'user', 'a1', 3);
    await add('a2', 'assistant', 'u2', 4);
    await add('u3', 'user', 'a1', 5);
    await add('a3', 'assistant', 'u3', 6);
    await store.writer.setHead(S, 'a3');
    expect((await run(['--db', db, '--root', root, 'sync'])).code).toBe(0);
    const repo = join(root, S);
    const onFork = git(repo, 'symbolic-ref', '--short', 'HEAD');
    expect(onFork).not.toBe('main');
    const forkFiles = readdirSync(join(repo, 'messages')).sort();

    rmSync(join(repo, '.git', 'index'));
    await add('u4', 'user', 'a2', 7);
    await add('a4', 'assistant', 'u4', 8);
    await store.writer.setHead(S, 'a4');
    await store.close();
    expect((await run(['--db', db, '--root', root, 'sync'])).code).toBe(0);
    expect(git(repo, 'symbolic-ref', '--short', 'HEAD')).toBe('main');
    // Exactly main's files: none of the fork's own turn is left behind, untracked.
    expect(readdirSync(join(repo, 'messages')).sort()).toEqual(
      git(repo, 'ls-tree', '--name-only', 'main:messages').split('\n'),
    );
    expect(forkFiles.filter((f) => !readdirSync(join(repo, 'messages')).includes(f)).length).toBeGreaterThan(0);
    expect(git(repo, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    expect((await run(['--db', db, '--root', root, 'verify'])).code).toBe(0);
  }, 300_000);
});
