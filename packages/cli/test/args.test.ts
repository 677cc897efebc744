import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/index.js';

// The argument matrix runs `main` in-process (the child-process suites spot-check that the
// binary passes the same codes and lines through): no database is opened on any of these paths.

async function call(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    isTTY: false,
  });
  return { code, stdout, stderr };
}
const usage = (message: string) => ({ code: 2, stdout: '', stderr: `entity-git: ${message}\n` });

describe('usage errors: exit 2, one line on stderr, nothing on stdout', () => {
  it.each([
    [[], 'missing command (see: entity-git --help)'],
    [['frob'], 'unknown command "frob" (see: entity-git --help)'],
    [['log'], 'log: missing SESSION (see: entity-git log --help)'],
    [['branches'], 'branches: missing SESSION (see: entity-git branches --help)'],
    [['log', 'a', 'b'], 'log: unexpected argument "b" (see: entity-git log --help)'],
    [['show', 'a', '1', '2'], 'show: unexpected argument "2" (see: entity-git show --help)'],
    [['sync', 'extra'], 'sync: unexpected argument "extra" (see: entity-git sync --help)'],
    [['--bogus', 'verify'], 'unknown option --bogus (see: entity-git verify --help)'],
    [['-x'], 'unknown option -x (see: entity-git --help)'],
    [['sync', '--branch', 'main'], 'sync takes no option --branch (see: entity-git sync --help)'],
    [['log', 's', '--session', 's'], 'log takes no option --session (see: entity-git log --help)'],
    [
      ['projects', 'list', '--description', 'd'],
      'projects list takes no option --description (see: entity-git projects list --help)',
    ],
    [['verify', '--json=yes'], 'option --json takes no value (see: entity-git verify --help)'],
    [
      ['log', 's', '--branch'],
      'option --branch needs a value (write --branch=VALUE for a value starting with -) (see: entity-git log --help)',
    ],
    [
      ['--root', '--json', 'verify'],
      'option --root needs a value (write --root=VALUE for a value starting with -) (see: entity-git verify --help)',
    ],
    [['log', 's', '--branch='], '--branch needs a non-empty value'],
    [
      ['projects'],
      'projects needs a subcommand: list, create, add-session, status, import, revert, diff, mode, restore (see: entity-git projects --help)',
    ],
    [
      ['projects', 'zap'],
      'unknown projects subcommand "zap": expected list, create, add-session, status, import, revert, diff, mode, restore',
    ],
    [
      ['projects', 'create', 'only-a-name'],
      'projects create: missing WORKDIR (see: entity-git projects create --help)',
    ],
    [
      ['projects', 'add-session', 'p'],
      'projects add-session: missing SESSION (see: entity-git projects add-session --help)',
    ],
    [['--identity', 'nobody', 'verify'], '--identity must look like "Name <email>", got "nobody"'],
    [['--version', 'sync'], 'sync takes no option --version (see: entity-git sync --help)'],
  ])('%j', async (argv, message) => {
    expect(await call(argv as string[])).toEqual(usage(message as string));
  });

  it('--db that is a directory, and a session id after -- that starts with a dash', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'entity-git-cli-args-'));
    expect(await call(['--db', dir, 'verify'])).toEqual(usage(`--db ${dir} is not a file`));
    expect(await call(['--db', join(dir, 'none.db'), 'log', '--', '-odd'])).toEqual(
      usage(`no database at ${join(dir, 'none.db')}`),
    );
  });
});

describe('--help at every level, --version', () => {
  it('prints to stdout, exit 0, whatever else is on the line', async () => {
    const top = await call(['--help']);
    expect([top.code, top.stderr]).toEqual([0, '']);
    expect(top.stdout).toMatch(/^entity-git — .*\n\nUsage: entity-git \[global options\] COMMAND \[options\]\n/);
    expect(top.stdout).toContain(
      'Exit codes: 0 ok, 1 verify found differences or sync failed, 2 bad arguments or input',
    );
    expect(await call(['-h'])).toEqual(top);
    expect(await call(['frob', '--help'])).toEqual(top);
    const firstLines: [string[], string][] = [
      [['sync', '--help'], 'Usage: entity-git sync [--session ID] [--full] [--quiet-time T] [--dry-run] [--json]'],
      [['verify', '-h'], 'Usage: entity-git verify [--session ID] [--full] [--quiet-time T] [--json]'],
      [['log', '--help'], 'Usage: entity-git log SESSION [--branch B] [--json]'],
      [
        ['--db', '/nonexistent', 'show', 'x', '-h', '--bogus'],
        'Usage: entity-git show SESSION [TURN|SHA] [--branch B] [--json]',
      ],
      [['branches', '--help'], 'Usage: entity-git branches SESSION [--json]'],
      [['projects', '--help'], 'Usage: entity-git projects list [--json]'],
      [['projects', 'list', '--help'], 'Usage: entity-git projects list [--json]'],
      [
        ['projects', 'create', '--help'],
        'Usage: entity-git projects create NAME WORKDIR [--description TEXT] [--json]',
      ],
      [['projects', 'add-session', '-h'], 'Usage: entity-git projects add-session PROJECT SESSION [--json]'],
    ];
    for (const [argv, first] of firstLines) {
      const r = await call(argv);
      expect([r.code, r.stderr, r.stdout.split('\n', 1)[0]]).toEqual([0, '', first]);
      expect(r.stdout).toContain('--db PATH|URL');
    }
    expect(top.stdout).toContain('clone --remote URL [--session ID]   another name for restore');
    // after --, -h is an argument, not a request for help
    expect((await call(['log', '--', '-h'])).code).toBe(2);
    expect(await call(['--version'])).toEqual({ code: 0, stdout: 'entity-git 0.1.0\n', stderr: '' });
  });
});

describe('clone, another name for restore', () => {
  it('prints the restore help, which names both', async () => {
    const restore = await call(['restore', '--help']);
    expect([restore.code, restore.stderr]).toEqual([0, '']);
    expect(restore.stdout.split('\n', 2)).toEqual([
      'Usage: entity-git restore --remote URL [--session ID] [--json]',
      '       entity-git clone --remote URL [--session ID] [--json]     (the same command)',
    ]);
    expect(await call(['clone', '--help'])).toEqual(restore);
    expect(await call(['--root', '/tmp', 'clone', '-h', '--remote', 'x'])).toEqual(restore);
  });

  it('takes the options of restore, and names itself in usage errors', async () => {
    expect(await call(['clone', '--branch', 'main'])).toEqual(
      usage('clone takes no option --branch (see: entity-git clone --help)'),
    );
    expect(await call(['clone', 'extra'])).toEqual(
      usage('clone: unexpected argument "extra" (see: entity-git clone --help)'),
    );
    expect(await call(['clone', '--session='])).toEqual(usage('--session needs a non-empty value'));
  });
});
