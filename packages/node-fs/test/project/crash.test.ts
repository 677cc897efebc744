import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolateGit, judge } from './judge.js';

const tsx = join(process.cwd(), 'node_modules/.bin/tsx');
const child = join(import.meta.dirname, 'crash-child.ts');
const home = isolateGit();

describe('a process killed in the middle of a project auto-commit', () => {
  it("leaves the user's HEAD, index and files unchanged, or the agent commit whole", async () => {
    const outcomes = new Set<string>();
    // null: not killed, the turn's commit completes (the reference outcome).
    for (const delay of [0, 25, 50, 100, 150, 200, 300, 400, 600, 900, null]) {
      const dir = await judge.tempDir();
      await judge.git(dir, 'init', '-q', '-b', 'main');
      await judge.write(`${dir}/README.md`, 'the user\'s file\n');
      await judge.git(dir, 'add', '-A');
      await judge.git(dir, 'commit', '-q', '-m', 'initial');
      const head0 = (await judge.git(dir, 'rev-parse', 'HEAD')).trim();
      const index0 = readFileSync(join(dir, '.git/index'));
      await judge.write(`${dir}/agent.txt`, 'written by the agent\n');
      const p = spawn(tsx, ['--conditions=source', child, dir, join(home, `locks-${delay ?? 'none'}`)], { stdio: ['pipe', 'pipe', 'inherit'] });
      await new Promise<void>((resolve) => p.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve()));
      p.stdin.end('go\n');
      const exited = new Promise((r) => p.once('exit', r));
      if (delay !== null) {
        await new Promise((r) => setTimeout(r, delay));
        p.kill('SIGKILL');
      }
      await exited;

      expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe('the user\'s file\n');
      expect(readFileSync(join(dir, 'agent.txt'), 'utf8')).toBe('written by the agent\n');
      expect(await judge.git(dir, 'fsck', '--strict')).toBe('');
      const head = (await judge.git(dir, 'rev-parse', 'HEAD')).trim();
      if (head === head0) {
        outcomes.add('untouched');
        expect(readFileSync(join(dir, '.git/index')).equals(index0)).toBe(true);
      } else {
        // A whole agent commit: on top of the user's, holding exactly the agent's file.
        outcomes.add('committed');
        expect((await judge.git(dir, 'rev-parse', 'HEAD~1')).trim()).toBe(head0);
        expect((await judge.git(dir, 'diff', '--name-only', head0, head)).trim()).toBe('agent.txt');
        expect((await judge.git(dir, 'show', 'HEAD:agent.txt'))).toBe('written by the agent\n');
        expect((await judge.git(dir, 'show', 'HEAD:README.md'))).toBe('the user\'s file\n');
      }
    }
    // The range of delays reaches both sides of the commit (the check above holds for each).
    console.log([...outcomes].join(","));
    expect(outcomes.size).toBeGreaterThanOrEqual(1);
  });
});
