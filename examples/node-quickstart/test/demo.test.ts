import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
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
    // The project is in the default mode, shadow: snapshots in a private repository, nothing in the project.
    expect(r.stdout).toContain('project: snapshotted before and after the turn (shadow mode)');
    expect(r.stdout).toContain('turn 1: added src/parser.ts (+3 -0, by tools)');
    expect(r.stdout).toContain('turn 2: added src/todo.md (+3 -0, by tools)');
    const project = join(tmpdir(), 'entity-git-quickstart-project');
    expect(existsSync(join(project, '.git'))).toBe(false);
    const [shadowDir] = readdirSync(join(base, 'shadow'));
    const shadow = join(base, 'shadow', shadowDir!, 'git');
    expect(git(shadow, 'show', 'refs/heads/snapshots:src/todo.md')).toBe('- parser.ts:3\n- lexer.ts:9\n- README.md:1');
    expect(git(shadow, 'fsck', '--strict')).toBe('');
  });
});
