import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildDb, json, run, tempDir, type Run } from './fixture.js';

const dir = tempDir();
const db = join(dir, 'dag.db');
const root = join(dir, 'sessions');
const code = join(dir, 'code');
const eg = (...args: string[]) => run(['--db', db, '--root', root, ...args]);
const usage = (stderr: string): Run => ({ code: 2, stdout: '', stderr: `entity-git: ${stderr}\n` });

/** Every path under a repository with its size and mtime: what "nothing written" is checked against. */
function snapshot(repo: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        const s = statSync(p);
        out.push(`${p} ${s.size} ${s.mtimeMs}`);
      }
    }
  };
  walk(repo);
  return out.sort();
}

beforeAll(async () => {
  await buildDb(db);
  for (const r of ['wiki', 'tools/lexer', 'tools/parser', 'node_modules/dep', '.hidden/secret', 'wiki/sub'])
    mkdirSync(join(code, r), { recursive: true });
  for (const r of ['wiki', 'tools/lexer', 'tools/parser', 'node_modules/dep', '.hidden/secret', 'wiki/sub'])
    execFileSync('git', ['init', '-q', join(code, r)]);
  writeFileSync(join(code, 'tools/lexer/lexer.ts'), 'export {};\n');
  mkdirSync(join(code, 'notes'));
});

describe('entity-git projects import', () => {
  it('a dry run first (nothing written anywhere), then --apply creates a project per repository that is none yet', async () => {
    const parser = json(await eg('projects', 'create', 'parser', join(code, 'tools/parser'), '--json')).project as {
      id: string;
    };
    // A name in use is made unique.
    await eg('projects', 'create', 'lexer', join(code, 'notes'));
    const before = [snapshot(join(code, 'wiki')), snapshot(join(code, 'tools/lexer'))];

    const dry = await eg('projects', 'import', code);
    expect(dry).toEqual({
      code: 0,
      stdout: [
        `would create  "lexer-2"  ${join(code, 'tools/lexer')}`,
        `already project ${parser.id}  "parser"  ${join(code, 'tools/parser')}`,
        `would create  "wiki"  ${join(code, 'wiki')}`,
        'dry run: nothing written; run again with --apply to create 2 projects',
        '',
      ].join('\n'),
      stderr: '',
    });
    expect(json(await eg('projects', 'list', '--json')).projects.map((p: { name: string }) => p.name)).toEqual([
      'parser',
      'lexer',
    ]);

    const applied = json(await eg('projects', 'import', code, '--apply', '--json'));
    expect(applied.applied).toBe(true);
    expect(applied.candidates.map((c: { name: string; status: string }) => [c.name, c.status])).toEqual([
      ['lexer-2', 'created'],
      ['parser', 'exists'],
      ['wiki', 'created'],
    ]);
    const list = json(await eg('projects', 'list', '--json')).projects as Array<{
      name: string;
      workdir: string;
      status: string;
    }>;
    expect(list.map((p) => [p.name, p.workdir, p.status])).toEqual([
      ['parser', join(code, 'tools/parser'), 'active'],
      ['lexer', join(code, 'notes'), 'active'],
      ['lexer-2', join(code, 'tools/lexer'), 'active'],
      ['wiki', join(code, 'wiki'), 'active'],
    ]);
    expect([snapshot(join(code, 'wiki')), snapshot(join(code, 'tools/lexer'))]).toEqual(before);
    // Run again: everything is a project already.
    expect(
      json(await eg('projects', 'import', code, '--json')).candidates.every(
        (c: { status: string }) => c.status === 'exists',
      ),
    ).toBe(true);
  });

  it('refuses a relative or missing directory', async () => {
    const [rel, missing] = await Promise.all([
      eg('projects', 'import', 'code'),
      eg('projects', 'import', join(dir, 'nope')),
    ]);
    expect([rel, missing]).toEqual([
      usage('DIR must be an existing directory given as an absolute path, got "code"'),
      usage(`DIR must be an existing directory given as an absolute path, got ${JSON.stringify(join(dir, 'nope'))}`),
    ]);
  });
});
