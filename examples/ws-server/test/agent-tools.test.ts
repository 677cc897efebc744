// The example agent's file tools stay in the project's workdir: the path's text, and what is on the
// disk under it (links out, links to .git), are both checked before a byte is read or written.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DagNode, Project, Session } from '@entity-git/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ECHO_NOTES_FILE, echoAgent, toolsFor } from '../src/agent.js';

let dir = '';
let workdir = '';
let outside = '';
const project = (): Project => ({
  id: 'proj_1',
  name: 'p',
  workdir,
  status: 'active',
  description: null,
  created_at: 0,
  sessions: ['s1'],
});
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => 'written',
    (err: { code?: string; message?: string }) => `${err.code}: ${err.message}`,
  );

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'eg-agent-')));
  workdir = join(dir, 'work');
  mkdirSync(workdir);
  execFileSync('git', ['init', '-q'], { cwd: workdir });
  outside = join(dir, 'outside.txt');
  writeFileSync(outside, 'the user file\n');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('toolsFor', () => {
  it('a committed file that links out of the workdir is neither read nor written', async () => {
    symlinkSync(outside, join(workdir, 'agent-notes.md'));
    const touched: string[] = [];
    const tools = toolsFor(project(), touched, {});
    expect(await refusal(tools.writeFile('agent-notes.md', 'pwned'))).toMatch(
      /^INVALID_ARGUMENT: .*"agent-notes\.md" is a symbolic link/,
    );
    expect(await refusal(tools.readFile('agent-notes.md'))).toMatch(/^INVALID_ARGUMENT: .*symbolic link/);
    expect(readFileSync(outside, 'utf8')).toBe('the user file\n');
    expect(touched).toEqual([]);
  });

  it('a directory that links to .git, or out of the workdir, is refused; so is .git in any case', async () => {
    symlinkSync(join(workdir, '.git'), join(workdir, 'docs'));
    symlinkSync(dir, join(workdir, 'up'));
    const tools = toolsFor(project(), [], {});
    const before = readFileSync(join(workdir, '.git', 'config'), 'utf8');
    expect(await refusal(tools.writeFile('docs/config', '[core]\n\tfsmonitor = touch /tmp/x/pwned\n'))).toMatch(
      /^INVALID_ARGUMENT: .*"docs" is a symbolic link/,
    );
    expect(await refusal(tools.writeFile('up/outside.txt', 'x'))).toMatch(/"up" is a symbolic link/);
    expect(await refusal(tools.writeFile('.GIT/config', 'x'))).toMatch(/inside the repository's \.git/);
    expect(await refusal(tools.writeFile('a/../../outside.txt', 'x'))).toMatch(/outside the project workdir/);
    expect(await refusal(tools.writeFile(outside, 'x'))).toMatch(/it is absolute/);
    expect(readFileSync(join(workdir, '.git', 'config'), 'utf8')).toBe(before);
    expect(readFileSync(outside, 'utf8')).toBe('the user file\n');
  });

  it('an ordinary path inside is written and reported as the turn’s edit', async () => {
    const touched: string[] = [];
    const tools = toolsFor(project(), touched, {});
    await tools.writeFile('src/new.txt', 'hello\n');
    expect(readFileSync(join(workdir, 'src', 'new.txt'), 'utf8')).toBe('hello\n');
    expect(touched).toEqual([join(workdir, 'src', 'new.txt')]);
    expect(await tools.readFile('src/new.txt')).toBe('hello\n');
    expect(await tools.readFile('missing.txt')).toBeNull();
  });
});

describe('echoAgent', () => {
  it('tells its reader the note was refused instead of writing through the link', async () => {
    symlinkSync(outside, join(workdir, ECHO_NOTES_FILE));
    const touched: string[] = [];
    const reply = await echoAgent({
      session: { id: 's1' } as Session,
      message: { content: 'hi' } as DagNode,
      project: project(),
      tools: toolsFor(project(), touched, {}),
    });
    expect(reply).toMatch(/I could not note it: .*"agent-notes\.md" is a symbolic link/);
    expect(readFileSync(outside, 'utf8')).toBe('the user file\n');
    expect(touched).toEqual([]);
  });
});
