import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { messageFileName, sessionDirName } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { HumanMessage } from '@langchain/core/messages';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { createLangGraphDag } from '../src/index.js';
import { agent } from './helpers/agent.js';
import { files, fsck, git, removeTempDirs, tempDir } from './helpers/git.js';

afterAll(removeTempDirs);

const HOSTILE = ['../x', 'a\0b', '.git', 'x/../../y', 'Ünï cødé 😀'];

describe('thread and message ids that are no safe path', () => {
  it('are escaped in the names of directories and files, kept as they are in the JSON; nothing is written outside the root', async () => {
    const dir = tempDir();
    const file = join(dir, 'checkpoints.sqlite');
    const saver = SqliteSaver.fromConnString(file);
    for (const threadId of HOSTILE) {
      const app = agent(saver, [{ id: `../reply\n${threadId}`, content: 'ok' }]);
      await app.invoke(
        { messages: [new HumanMessage({ id: `/etc/passwd\0${threadId}`, content: 'hi' })] },
        { configurable: { thread_id: threadId } },
      );
    }
    const dag = createLangGraphDag({ saver });
    expect((await dag.listSessions()).sort()).toEqual([...HOSTILE].sort());
    const root = join(dir, 'sessions');
    const mirror = createNodeMirror({ dag, root });
    for (const threadId of await dag.listSessions()) await mirror.sync(threadId);

    expect(readdirSync(dir).sort()).toEqual([
      'checkpoints.sqlite',
      'checkpoints.sqlite-shm',
      'checkpoints.sqlite-wal',
      'sessions',
    ]);
    expect(readdirSync(root).sort()).toEqual(HOSTILE.map(sessionDirName).sort());
    for (const threadId of HOSTILE) {
      const repo = join(root, sessionDirName(threadId));
      expect(mirror.repoPath(threadId)).toBe(repo);
      const user = `/etc/passwd\0${threadId}`;
      const reply = `../reply\n${threadId}`;
      expect(files(repo, 'main')).toEqual([
        `messages/${messageFileName({ seq: 1, role: 'user', id: user })}`,
        `messages/${messageFileName({ seq: 2, role: 'assistant', id: reply })}`,
        'meta.json',
      ]);
      expect(JSON.parse(readFileSync(join(repo, 'meta.json'), 'utf8')).id).toBe(threadId);
      const node = JSON.parse(
        git(repo, 'show', `main:messages/${messageFileName({ seq: 2, role: 'assistant', id: reply })}`),
      );
      expect([node.id, node.predecessor, node.session_id]).toEqual([reply, user, threadId]);
      expect(git(repo, 'status', '--porcelain')).toBe('');
      expect(fsck(repo)).toBe('');
    }
    saver.db.close();
  });

  it('an id the mirror cannot name (over 1,024 bytes) is refused with INVALID_ID, and nothing is written for it', async () => {
    const dir = tempDir();
    const saver = SqliteSaver.fromConnString(join(dir, 'checkpoints.sqlite'));
    const long = 'x'.repeat(1100);
    await agent(saver, [{ id: 'a1', content: 'ok' }]).invoke(
      { messages: [new HumanMessage({ id: 'h1', content: 'hi' })] },
      { configurable: { thread_id: long } },
    );
    const root = join(dir, 'sessions');
    const mirror = createNodeMirror({ dag: createLangGraphDag({ saver }), root });
    await expect(mirror.sync(long)).rejects.toMatchObject({ name: 'EntityGitError', code: 'INVALID_ID' });
    expect(existsSync(root) ? readdirSync(root) : []).toEqual([]);
    saver.db.close();
  });
});
