import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

describe('the quickstart demo (the README demo command)', () => {
  it('builds the session and project repositories it describes, clean by native git', () => {
    const base = join(mkdtempSync(join(tmpdir(), 'eg-demo-')), 'out');
    const tsx = join(process.cwd(), 'node_modules/.bin/tsx');
    const r = spawnSync(tsx, ['--conditions=source', join(import.meta.dirname, '../src/main.ts'), base], {
      encoding: 'utf8',
      cwd: process.cwd(),
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(existsSync(join(base, 'entity-git.db'))).toBe(true);
    const session = join(base, 'sessions', 'demo-session');
    expect(git(session, 'for-each-ref', '--format=%(refname:short)', 'refs/heads').split('\n').sort()).toEqual([
      'fork-u3',
      'main',
      'retry-a2r',
    ]);
    expect(git(session, 'symbolic-ref', '--short', 'HEAD')).toBe('fork-u3');
    expect(git(session, 'fsck', '--strict')).toBe('');
    expect(git(session, 'status', '--porcelain')).toBe('');
    expect(git(session, 'log', '--format=%s', 'main').split('\n')).toEqual([
      'turn 2: Find every TODO',
      'turn 1: What is in src/? 列出文件 🙂',
    ]);
    expect(r.stdout).toContain('verify: the repository equals the DAG');
    expect(r.stdout).toContain("⚠ you have uncommitted changes, the agent's edits won't be auto-committed for now");
    const project = join(tmpdir(), 'entity-git-quickstart-project');
    expect(git(project, 'log', '--format=%cn|%s')).toBe(
      'agent (claude-sonnet-4.7 via OpenProgram)|[agent demo-session] turn 1: What is in src/? 列出文件 🙂',
    );
    expect(git(project, 'status', '--porcelain').split('\n')).toEqual(['?? NOTES.md', '?? src/todo.md']);
    expect(git(project, 'fsck', '--strict')).toBe('');
  });
});
