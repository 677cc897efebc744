import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { GOLDEN_SESSION } from '@entity-git/test-utils';
import { renderBar } from '../src/progress.js';
import { COMMAND, PLAIN_ID, REPO_ROOT, SHORT_ID, buildDb, tempDir } from './fixture.js';

const SID = GOLDEN_SESSION.id;
const dir = tempDir();
const db = join(dir, 'dag.db');

// util-linux `script` runs the command on a pseudo-terminal, so the CLI's stdout is a real TTY.
const hasScript = (() => {
  try {
    return execFileSync('script', ['--version'], { encoding: 'utf8' }).includes('util-linux');
  } catch {
    return false;
  }
})();

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** `entity-git ARGS` on a pseudo-terminal; what the terminal received. */
function onTerminal(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qfec', [...COMMAND, ...args].map(quote).join(' '), '/dev/null'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

beforeAll(async () => {
  await buildDb(db);
});

describe('sync on a terminal', () => {
  it('has util-linux script to make a pseudo-terminal', () => {
    expect(hasScript).toBe(true);
  });

  it.runIf(hasScript)('redraws one progress bar with \\r, prints failures above it, then the summary', async () => {
    const root = join(dir, 'sessions');
    mkdirSync(root);
    writeFileSync(join(root, SHORT_ID), 'not a directory');
    const r = await onTerminal(['--db', db, '--root', root, 'sync']);
    expect(r.code).toBe(1);
    // The terminal turns \n into \r\n; the bar's redraws are bare \r, each ending in clear-to-end.
    const failure = new RegExp(`${SHORT_ID} failed \\((STORAGE_ERROR|REPO_CORRUPT): [^\\r\\n]+\\)`);
    expect(r.out).toMatch(failure);
    expect(r.out.replace(failure, `${SHORT_ID} failed (…)`)).toBe(
      [
        `\r[--------------------] 0/3 ${SID}\x1b[K`,
        `\r[#######-------------] 1/3 ${SID}\x1b[K`,
        `\r[#############-------] 2/3 ${PLAIN_ID}\x1b[K`,
        `\r\x1b[K${SHORT_ID} failed (…)\r\n`,
        `\r[####################] 3/3 ${SHORT_ID}\x1b[K\r\n`,
        'synced 3 sessions: 2 backfilled, 1 failed\r\n',
        `entity-git: 1 session failed to sync: ${SHORT_ID}\r\n`,
      ].join(''),
    );
  });

  it.runIf(hasScript)('a clean run on a terminal ends with a full bar and the summary', async () => {
    const r = await onTerminal(['--db', db, '--root', join(dir, 'clean'), 'sync', '--session', PLAIN_ID]);
    expect(r).toEqual({
      code: 0,
      out: `\r[--------------------] 0/1 ${PLAIN_ID}\x1b[K\r[####################] 1/1 ${PLAIN_ID}\x1b[K\r\nsynced 1 session: 1 backfilled, 0 failed\r\n`,
    });
  });
});

describe('renderBar', () => {
  it('fills in proportion and never wraps the terminal', () => {
    expect(renderBar(0, 4, 's')).toBe('[--------------------] 0/4 s');
    expect(renderBar(1, 4, 's')).toBe('[#####---------------] 1/4 s');
    expect(renderBar(4, 4, 's')).toBe('[####################] 4/4 s');
    expect(renderBar(0, 0, '')).toBe('[####################] 0/0');
    expect(renderBar(1, 2, 'x'.repeat(200), 40)).toBe(`[##########----------] 1/2 ${'x'.repeat(12)}`);
    expect(Array.from(renderBar(1, 2, '🙂'.repeat(50), 40))).toHaveLength(39);
  });
});
