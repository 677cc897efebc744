import type { ProjectGit } from '@entity-git/core';
import type { ProjectGitOptions } from '@entity-git/project';
import { expect } from 'vitest';
import { COMMITTER, EMAIL, NOW, type SuiteContext } from './context.js';

/** What the undo tests share: an agent turn committed through the real auto-commit, and git asked about the result. */
export function revertContext(c: SuiteContext) {
  const { j, projectGit, repo, input } = c;

  /** The agent's turn `turn` of `sess-1`: `files` written (null: removed), committed by `afterTurn`; its commit id. */
  async function agentTurn(
    pg: ProjectGit,
    dir: string,
    files: Record<string, string | null>,
    turn = 7,
    sessionId = 'sess-1',
  ): Promise<string> {
    const snap = await pg.beforeTurn(dir);
    for (const [p, data] of Object.entries(files)) {
      if (data === null) await j.remove(`${dir}/${p}`);
      else await j.write(`${dir}/${p}`, data);
    }
    const r = await pg.afterTurn(input(dir, Object.keys(files), snap, { turn, sessionId }));
    expect(r.status).toBe('committed');
    return (await j.git(dir, 'rev-parse', 'HEAD')).trim();
  }

  /** A repository with `old.txt`, and the agent's turn 7 changing `src/main.ts`, adding `src/new/parser.ts`, removing `old.txt`. */
  async function withAgentTurn(extra: Record<string, string> = {}, options: Partial<ProjectGitOptions> = {}) {
    const dir = await repo({
      'README.md': '# project\n',
      'src/main.ts': 'export const x = 1;\n',
      'old.txt': 'to be removed\n',
      ...extra,
    });
    const pg = projectGit(options);
    const before = (await j.git(dir, 'rev-parse', 'HEAD')).trim();
    const agent = await agentTurn(pg, dir, {
      'src/main.ts': 'export const x = 2;\n',
      'src/new/parser.ts': 'export function parse() {}\n',
      'old.txt': null,
    });
    return { dir, pg, before, agent };
  }

  const rev = async (dir: string, r: string) => (await j.git(dir, 'rev-parse', r)).trim();

  /** Native git's view that the working tree and index hold HEAD exactly, and the repository is sound. */
  async function expectClean(dir: string): Promise<void> {
    // Plumbing first: `git status` would refresh the index itself and hide missing stat data.
    expect(await j.gitCode(dir, 'diff-files', '--quiet')).toBe(0);
    expect(await j.gitCode(dir, 'diff-index', '--cached', '--quiet', 'HEAD')).toBe(0);
    expect(await c.porcelain(dir)).toBe('');
    expect(await j.git(dir, 'fsck', '--strict')).toBe('');
  }

  /**
   * The revert commit the undo must write on `parent` for a `tree`: its bytes as git's commit
   * format has them (the agent's identity, the fixed clock), and the id native git gives those bytes.
   */
  async function expectedRevertCommit(
    dir: string,
    tree: string,
    parent: string,
    message: string,
  ): Promise<{ text: string; id: string }> {
    const who = `${COMMITTER} <${EMAIL}> ${Math.floor(NOW / 1000)} +0000`;
    const text = `tree ${tree}\nparent ${parent}\nauthor ${who}\ncommitter ${who}\n\n${message}`;
    const file = `${await j.tempDir()}/commit`;
    await j.write(file, text);
    return { text, id: (await j.git(dir, 'hash-object', '-t', 'commit', file)).trim() };
  }

  return { agentTurn, withAgentTurn, rev, expectClean, expectedRevertCommit };
}

export type RevertContext = ReturnType<typeof revertContext>;
