import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ProjectSnapshot } from '@entity-git/core';
import { createNodeProjectGit } from '@entity-git/project/node';
import { describe, expect, it } from 'vitest';
import { isolateGit, judge } from './judge.js';
import { builtChild } from '@entity-git/test-utils/node-child';

const child = builtChild(join(import.meta.dirname, 'crash-child.ts'));
const home = isolateGit();

describe('a process killed in the middle of a project auto-commit', () => {
  it("leaves the user's HEAD, index and files unchanged, or the agent commit whole; the turn rerun ends with the one agent commit and a clean status", async () => {
    const outcomes = new Set<string>();
    // null: not killed, the turn's commit completes (the reference outcome).
    for (const delay of [0, 25, 50, 100, 150, 200, 300, 400, 600, 900, null]) {
      const dir = await judge.tempDir();
      const lockDir = join(home, `locks-${delay ?? 'none'}`);
      await judge.git(dir, 'init', '-q', '-b', 'main');
      await judge.write(`${dir}/README.md`, "the user's file\n");
      await judge.git(dir, 'add', '-A');
      await judge.git(dir, 'commit', '-q', '-m', 'initial');
      const head0 = (await judge.git(dir, 'rev-parse', 'HEAD')).trim();
      const index0 = readFileSync(join(dir, '.git/index'));
      // Its own process group: the kill takes the child and any git it is running at once.
      const p = spawn(process.execPath, [child, dir, lockDir], {
        stdio: ['pipe', 'pipe', 'inherit'],
        detached: true,
      });
      let out = '';
      // The turn begins: the child takes its snapshot before the agent writes anything.
      const snapshot = await new Promise<ProjectSnapshot>((resolve) =>
        p.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /^ready (.*)\n/m.exec(out);
          if (m) resolve(JSON.parse(m[1]!) as ProjectSnapshot);
        }),
      );
      expect(snapshot.dirty).toEqual([]);
      // The agent's edit, then the turn ends.
      await judge.write(`${dir}/agent.txt`, 'written by the agent\n');
      p.stdin.end('go\n');
      const exited = new Promise((r) => p.once('exit', r));
      let killed = false;
      if (delay !== null) {
        await new Promise((r) => setTimeout(r, delay));
        try {
          process.kill(-p.pid!, 'SIGKILL');
          killed = true;
        } catch (err) {
          // The turn had finished already: nothing left to kill.
          if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
        }
      }
      await exited;
      if (delay === null) expect(out).toContain('result "committed"');

      expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe("the user's file\n");
      expect(readFileSync(join(dir, 'agent.txt'), 'utf8')).toBe('written by the agent\n');
      // A commit object written before the kill and never referenced is dangling: harmless, `git gc` prunes it.
      expect(await judge.git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
      const head = (await judge.git(dir, 'rev-parse', 'HEAD')).trim();
      if (head === head0) {
        outcomes.add(killed ? 'untouched, killed' : 'untouched');
        expect(readFileSync(join(dir, '.git/index')).equals(index0)).toBe(true);
      } else {
        // A whole agent commit: on top of the user's, holding exactly the agent's file.
        outcomes.add(killed ? 'committed, killed' : 'committed');
        expect((await judge.git(dir, 'rev-parse', 'HEAD~1')).trim()).toBe(head0);
        expect((await judge.git(dir, 'diff', '--name-only', head0, head)).trim()).toBe('agent.txt');
        expect(await judge.git(dir, 'show', 'HEAD:agent.txt')).toBe('written by the agent\n');
        expect(await judge.git(dir, 'show', 'HEAD:README.md')).toBe("the user's file\n");
      }

      // The turn's afterTurn again (the killed one's snapshot, the same lock and journal): it
      // commits what was not committed, or finishes what was, and leaves nothing staged.
      const rerun = () =>
        createNodeProjectGit({ dir: lockDir }).afterTurn({
          workdir: dir,
          sessionId: 'crash',
          turn: 1,
          userMessage: 'write agent.txt',
          model: 'm',
          touchedPaths: ['agent.txt'],
          snapshot,
        });
      let again = await rerun();
      // A kill while a git held a lock (the index's, the branch's) leaves it, as git does when
      // killed: the rerun moves nothing and names the lock; once it is removed (as git's own message
      // asks), the rerun goes on. A kill can leave more than one (the index's and the branch's).
      for (let n = 0; again.status === 'skipped' && again.reason === 'repository-locked'; n++) {
        expect(killed).toBe(true);
        expect(n).toBeLessThan(3);
        const lock = /\((\/.+\.lock) exists\)/.exec(again.warning ?? '')?.[1];
        expect(['index', 'HEAD', 'refs/heads/main'].map((f) => join(dir, `.git/${f}.lock`))).toContain(lock);
        expect(existsSync(lock!)).toBe(true);
        expect((await judge.git(dir, 'rev-parse', 'HEAD')).trim()).toBe(head);
        outcomes.add('locked, killed');
        rmSync(lock!);
        again = await rerun();
      }
      expect(again, `rerun after a kill at ${delay} ms: ${JSON.stringify(again)}`).toMatchObject({
        status: head === head0 ? 'committed' : 'skipped',
      });
      expect((await judge.git(dir, 'rev-list', '--count', `${head0}..HEAD`)).trim()).toBe('1');
      expect(await judge.git(dir, 'show', 'HEAD:agent.txt')).toBe('written by the agent\n');
      expect(await judge.git(dir, 'status', '--porcelain')).toBe('');
    }
    // An early kill comes before the commit, the run not killed commits (the checks above hold
    // for every run); where a late kill lands relative to the commit depends on the machine.
    // crash-every-step-suite.ts kills the commit after each of its steps.
    console.log([...outcomes].join('; '));
    expect(outcomes.has('untouched, killed')).toBe(true);
    expect(outcomes.has('committed')).toBe(true);
  });
});
