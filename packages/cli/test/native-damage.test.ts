// Damage native git trips over while the mirror reads around it (issue #26, items 3 and 4): a
// commit-graph failing its checksum, corrupt loose objects (a truncated commit, a flipped byte in
// a tree, an emptied blob), a flipped byte in a pack. `verify` must see each (exit 1), `sync` must
// repair it, and afterwards native git must agree: `git fsck --strict` clean, `git log` whole,
// every ref the id a fresh backfill gives.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { GOLDEN_SESSION } from '@entity-git/test-utils';
import { PLAIN_ID, SHORT_ID, buildDb, git, revParseAll, run, tempDir } from './fixture.js';

const SID = GOLDEN_SESSION.id;
const dir = tempDir();
const db = join(dir, 'dag.db');
const fresh = join(dir, 'fresh');
const eg = (root: string, ...args: string[]) => run(['--db', db, '--root', root, ...args]);
const sessions = [SID, PLAIN_ID, SHORT_ID];
let reference: Record<string, Record<string, string>>;

beforeAll(async () => {
  await buildDb(db);
  expect((await eg(fresh, 'sync')).code).toBe(0);
  reference = Object.fromEntries(sessions.map((s) => [s, revParseAll(join(fresh, s))]));
}, 300_000);

function flip(file: string, at: number): void {
  const bytes = readFileSync(file);
  bytes[at] = bytes[at]! ^ 0xff;
  writeFileSync(file, bytes);
}

const objectPath = (repo: string, id: string) => join(repo, '.git', 'objects', id.slice(0, 2), id.slice(2));

/**
 * verify exit 1 naming `kind`, sync repaired, then native git clean and the refs golden. Damage
 * below intact refs is what `--full` is for: the default start-up check trusts a session whose
 * change marker, refs and working-tree stat are where its last sync left them (issue 22).
 */
async function repairs(root: string, session: string, detail: RegExp): Promise<void> {
  const repo = join(root, session);
  const verify = await eg(root, 'verify', '--full', '--json');
  expect(verify.code).toBe(1);
  const report = JSON.parse(verify.stdout).sessions.find((s: { sessionId: string }) => s.sessionId === session);
  expect(report.differences.map((d: { detail: string }) => d.detail).join('\n')).toMatch(detail);
  const sync = await eg(root, 'sync', '--full', '--json');
  expect(sync.code, `${sync.stderr}\n${sync.stdout}`).toBe(0);
  expect(JSON.parse(sync.stdout).sessions.find((s: { sessionId: string }) => s.sessionId === session).action).toBe(
    'repaired',
  );
  expect(git(repo, 'fsck', '--strict', '--no-dangling')).toBe('');
  expect(git(repo, 'status', '--porcelain')).toBe('');
  for (const s of sessions) expect(revParseAll(join(root, s))).toEqual(reference[s]);
  expect(git(repo, 'log', '--format=%H', 'main').split('\n')).toEqual(
    git(join(fresh, session), 'log', '--format=%H', 'main').split('\n'),
  );
  expect((await eg(root, 'verify', '--full')).code).toBe(0);
}

describe('damage native git sees: found by verify, repaired by sync, judged by git fsck', () => {
  it('a commit-graph with one flipped byte is removed', async () => {
    const root = join(dir, 'graph');
    expect((await eg(root, 'sync')).code).toBe(0);
    const repo = join(root, SID);
    git(repo, 'commit-graph', 'write', '--reachable');
    const graph = join(repo, '.git', 'objects', 'info', 'commit-graph');
    flip(graph, Math.floor(readFileSync(graph).length / 2));
    await repairs(root, SID, /commit-graph fails its checksum/);
  }, 300_000);

  it('a truncated commit, a flipped byte in a tree, an emptied blob (loose) are rewritten', async () => {
    const root = join(dir, 'loose');
    expect((await eg(root, 'sync')).code).toBe(0);
    const repo = join(root, PLAIN_ID);
    // A short backfill writes one pack: its objects are made loose, as a turn writes them.
    const packs = join(repo, '.git', 'objects', 'pack');
    for (const name of readdirSync(packs).filter((n) => n.endsWith('.pack'))) {
      const bytes = readFileSync(join(packs, name));
      for (const ext of ['.pack', '.idx', '.rev']) rmSync(join(packs, name.replace(/\.pack$/, ext)), { force: true });
      execFileSync('git', ['unpack-objects', '-q'], { cwd: repo, input: bytes });
    }
    const commit = objectPath(repo, git(repo, 'rev-parse', 'main'));
    const tree = objectPath(repo, git(repo, 'rev-parse', 'main^{tree}'));
    const blob = objectPath(repo, git(repo, 'rev-parse', 'main:meta.json'));
    truncateSync(commit, Math.floor(readFileSync(commit).length / 2));
    flip(tree, readFileSync(tree).length - 3);
    truncateSync(blob, 0);
    await repairs(root, PLAIN_ID, /loose object .* is corrupt \(empty\)/);
  }, 300_000);

  it('a pack with one flipped byte: its objects salvaged loose, the pack removed', async () => {
    const root = join(dir, 'pack');
    expect((await eg(root, 'sync')).code).toBe(0);
    const repo = join(root, SHORT_ID);
    git(repo, 'repack', '-a', '-d', '-q');
    const pack = git(repo, 'rev-parse', '--git-path', 'objects/pack').split('\n')[0]!;
    const name = readdirPack(join(repo, pack));
    // A byte of the last object's data, so the object ids still read but the pack fails its checksum.
    const file = join(repo, pack, name);
    flip(file, readFileSync(file).length - 21);
    await repairs(root, SHORT_ID, /pack .* fails its checksum/);
  }, 300_000);
});

function readdirPack(dir: string): string {
  const names = readdirSync(dir).filter((n) => n.endsWith('.pack'));
  expect(names).toHaveLength(1);
  return names[0]!;
}
