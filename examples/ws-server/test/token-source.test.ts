// The token the user picks reaches the server from a private file or the environment, never argv.
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readTokenFile, TOKEN_ENV, userToken } from '../src/token-source.js';

let dir = '';
const TOKEN = 'a-token-of-enough-bits-0123456789';
const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (err: { code?: string; message?: string }) => `${err.code}: ${err.message}`,
  );

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'eg-token-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('readTokenFile', () => {
  it('reads a 0600 file, and refuses one others can read, a link, or an empty one', async () => {
    const file = join(dir, 'token');
    writeFileSync(file, `${TOKEN}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
    expect(await readTokenFile(file)).toBe(TOKEN);
    chmodSync(file, 0o644);
    expect(await codeOf(readTokenFile(file))).toMatch(/^INVALID_OPTION: .*readable or writable by others \(mode 644\)/);
    chmodSync(file, 0o600);
    symlinkSync(file, join(dir, 'link'));
    expect(await codeOf(readTokenFile(join(dir, 'link')))).toMatch(/^INVALID_OPTION: .*is a symbolic link/);
    writeFileSync(join(dir, 'empty'), '', { mode: 0o600 });
    expect(await codeOf(readTokenFile(join(dir, 'empty')))).toMatch(/^INVALID_OPTION: .*is empty/);
  });

  it('takes the environment variable when no file is named, and removes it so no child inherits it', async () => {
    const env: NodeJS.ProcessEnv = { [TOKEN_ENV]: TOKEN, OTHER: 'x' };
    expect(await userToken(undefined, env)).toBe(TOKEN);
    expect(env).toEqual({ OTHER: 'x' });
    expect(await userToken(undefined, {})).toBeUndefined();
  });
});

describe('main.ts', () => {
  it('has no --token option: a secret on the command line is readable in /proc by every local user', async () => {
    const main = join(import.meta.dirname, '..', 'src', 'main.ts');
    const out = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [
          '--import',
          'tsx',
          '--conditions=source',
          main,
          '--db',
          join(dir, 'x.db'),
          '--root',
          join(dir, 's'),
          '--token',
          TOKEN,
        ],
        { timeout: 60_000 },
        (err, _stdout, stderr) =>
          resolve({ code: err === null ? 0 : ((err as { code?: number }).code ?? null), stderr }),
      );
      child.stdin?.end();
    });
    expect(out.code).not.toBe(0);
    expect(out.stderr).toMatch(/Unknown option '--token'/);
  });
});
