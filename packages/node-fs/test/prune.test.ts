import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MemoryDag, sessionDirName, type DagSource } from '@entity-git/core';
import { createNodeMirror, diskUsage, pruneSessionRepository, pruneSessions, PRUNE_TRASH } from '@entity-git/node-fs';
import { GOLDEN_SESSION, writeGolden } from '@entity-git/test-utils';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from './helpers.js';

const GONE = 'gone/1 ✂';
const KEPT = 'kept';
const OTHER = GOLDEN_SESSION.id;

/** Three sessions mirrored under a root with foreign entries beside them; `after` is the DAG once GONE was deleted. */
async function setup() {
  const before = new MemoryDag({ now: () => 1779600000 });
  const after = new MemoryDag({ now: () => 1779600000 });
  for (const dag of [before, after]) {
    await writeGolden(dag);
    await writeGolden(dag, { sessionId: KEPT });
  }
  await writeGolden(before, { sessionId: GONE });
  const root = tempDir();
  const mirror = createNodeMirror({ dag: before, root });
  for (const id of [OTHER, KEPT, GONE]) await mirror.sync(id);
  // What else a root may hold: a plain git repository, a file, a repository named as a session would be.
  git(root, 'init', '-q', 'notes');
  writeFileSync(join(root, 'index.sqlite'), 'not a repository');
  git(root, 'init', '-q', 'imposter');
  return { root, after: after as DagSource, gonePath: join(root, sessionDirName(GONE)) };
}

/** A digest of every name, mode, link and byte under `dir`. */
function hashTree(dir: string): string {
  const h = createHash('sha256');
  const walk = (p: string, rel: string) => {
    const st = lstatSync(p);
    h.update(`${rel}\0${st.mode}\0`);
    if (st.isSymbolicLink()) h.update(readlinkSync(p));
    else if (st.isDirectory()) for (const n of readdirSync(p).sort()) walk(join(p, n), `${rel}/${n}`);
    else h.update(readFileSync(p));
  };
  walk(dir, '');
  return h.digest('hex');
}

/** `<oid> <ref>` of every ref, sorted. */
const refsOf = (repo: string, prefix = 'refs/') =>
  git(repo, 'for-each-ref', '--format=%(objectname) %(refname)', prefix).trim().split('\n').sort();

describe('prune', () => {
  it('a dry run reports the deleted session and changes nothing', async () => {
    const { root, after } = await setup();
    const hash = hashTree(root);
    const report = await pruneSessions({ root, dag: after, dryRun: true, archive: join(root, '..', 'arch') });
    expect(report.pruned.map((p) => [p.sessionId, p.name, p.archive])).toEqual([[GONE, 'gone%2F1%20%E2%9C%82', null]]);
    expect(report.kept).toBe(2);
    expect(report.foreign.map((f) => f.name)).toEqual(['imposter', 'index.sqlite', 'notes']);
    expect(hashTree(root)).toBe(hash);
    expect(existsSync(join(root, '..', 'arch'))).toBe(false);
  });

  it('archives the deleted session as a bundle that clones back to the same branches and ids, then removes it', async () => {
    const { root, after, gonePath } = await setup();
    const refs = refsOf(gonePath);
    const heads = refsOf(gonePath, 'refs/heads/');
    const keptHashes = [OTHER, KEPT, 'notes', 'imposter', 'index.sqlite'].map((n) =>
      hashTree(join(root, n === OTHER || n === KEPT ? sessionDirName(n) : n)),
    );
    const archive = join(tempDir(), 'archive');
    const report = await pruneSessions({ root, dag: after, archive });
    const bundle = join(archive, `${sessionDirName(GONE)}.bundle`);
    expect(report.pruned.map((p) => [p.sessionId, p.archive])).toEqual([[GONE, bundle]]);
    expect(report.pruned[0]!.size.disk).toBeGreaterThan(0);
    expect(existsSync(gonePath)).toBe(false);
    expect(readdirSync(archive)).toEqual([`${sessionDirName(GONE)}.bundle`]);
    expect(existsSync(join(root, PRUNE_TRASH))).toBe(false);
    // Nothing else moved: the kept sessions, the foreign entries.
    expect(
      [OTHER, KEPT, 'notes', 'imposter', 'index.sqlite'].map((n) =>
        hashTree(join(root, n === OTHER || n === KEPT ? sessionDirName(n) : n)),
      ),
    ).toEqual(keptHashes);

    const clone = join(tempDir(), 'clone');
    git(archive, 'clone', '-q', '--mirror', bundle, clone);
    expect(refsOf(clone)).toEqual(refs);
    expect(git(clone, 'fsck', '--strict', '--no-progress')).toBe('');
    const work = join(tempDir(), 'work');
    git(archive, 'clone', '-q', bundle, work);
    expect(refsOf(work, 'refs/remotes/origin/').filter((l) => !l.endsWith('/HEAD'))).toEqual(
      heads.map((l) => l.replace(' refs/heads/', ' refs/remotes/origin/')),
    );
    expect(git(work, 'status', '--porcelain')).toBe('');
    expect(JSON.parse(git(work, 'show', 'HEAD:meta.json')).id).toBe(GONE);
  });

  it('removes without archiving, and a second run finds nothing', async () => {
    const { root, after, gonePath } = await setup();
    expect((await pruneSessions({ root, dag: after })).pruned.map((p) => [p.sessionId, p.archive])).toEqual([
      [GONE, null],
    ]);
    expect(existsSync(gonePath)).toBe(false);
    expect((await pruneSessions({ root, dag: after })).pruned).toEqual([]);
  });

  it('refuses, touching nothing, a session still in the DAG and a directory that is not a session repository', async () => {
    const { root, after } = await setup();
    const hash = hashTree(root);
    const codeOf = (p: Promise<unknown>) =>
      p.then(
        () => 'ok',
        (e: { code?: string }) => e.code,
      );
    expect(await codeOf(pruneSessionRepository({ root, dag: after, sessionId: KEPT }))).toBe('SESSION_IN_DAG');
    expect(await codeOf(pruneSessionRepository({ root, dag: after, sessionId: 'imposter' }))).toBe(
      'NOT_SESSION_REPOSITORY',
    );
    expect(await codeOf(pruneSessionRepository({ root, dag: after, sessionId: 'notes' }))).toBe(
      'NOT_SESSION_REPOSITORY',
    );
    expect(await codeOf(pruneSessionRepository({ root, dag: after, sessionId: 'absent' }))).toBe(
      'NOT_SESSION_REPOSITORY',
    );
    // A DAG holding none of the sessions looks like the wrong database.
    expect(await codeOf(pruneSessions({ root, dag: new MemoryDag() }))).toBe('PRUNE_REFUSED');
    expect(await codeOf(pruneSessions({ root, dag: new MemoryDag(), dryRun: true }))).toBe('PRUNE_REFUSED');
    expect(hashTree(root)).toBe(hash);
    const all = await pruneSessions({ root, dag: new MemoryDag(), all: true });
    expect(all.pruned.map((p) => p.sessionId).sort()).toEqual([GONE, OTHER, KEPT].sort());
    expect(readdirSync(root).sort()).toEqual(['imposter', 'index.sqlite', 'notes']);
  });

  it('a crash between the archive and the removal loses nothing, and the next prune finishes', async () => {
    const { root, after, gonePath } = await setup();
    const refs = refsOf(gonePath);
    const archive = join(tempDir(), 'archive');
    // git that kills the pruning process once the bundle is written and checked: the crash lands
    // after the archive and before the repository is touched.
    const bin = join(tempDir(), 'git-then-crash');
    writeFileSync(bin, `#!/bin/sh\ngit "$@"\ns=$?\ncase "$*" in *list-heads*) kill -9 $PPID;; esac\nexit $s\n`);
    chmodSync(bin, 0o755);
    const child = spawnSync(
      process.execPath,
      [
        '--import',
        pathToFileURL(createRequire(join(process.cwd(), 'package.json')).resolve('tsx')).href,
        '--conditions=source',
        join(import.meta.dirname, 'prune-child.ts'),
        root,
        archive,
        bin,
        OTHER,
        KEPT,
      ],
      { encoding: 'utf8' },
    );
    expect(child.signal).toBe('SIGKILL');
    expect(child.stdout).not.toContain('not killed');
    // The repository stands whole; an unnamed bundle at most.
    expect(readdirSync(archive).filter((n) => n.endsWith('.bundle'))).toEqual([]);
    expect(refsOf(gonePath)).toEqual(refs);
    expect(git(gonePath, 'fsck', '--strict', '--no-progress')).toBe('');
    // A removal a crash interrupted inside the trash is finished too.
    mkdirSync(join(root, PRUNE_TRASH, 'left-over', '.git'), { recursive: true });
    const report = await pruneSessions({ root, dag: after, archive });
    expect(report.pruned.map((p) => p.sessionId)).toEqual([GONE]);
    expect(existsSync(join(root, PRUNE_TRASH))).toBe(false);
    const clone = join(tempDir(), 'clone');
    git(archive, 'clone', '-q', '--mirror', report.pruned[0]!.archive!, clone);
    expect(refsOf(clone)).toEqual(refs);
    expect(readdirSync(archive)).toEqual([`${sessionDirName(GONE)}.bundle`]);
  });
});

describe('du', () => {
  it('gives each session repository the sizes du(1) gives it, and their total', async () => {
    const { root } = await setup();
    const report = await diskUsage(root);
    expect(report.sessions.map((s) => s.sessionId).sort()).toEqual([GONE, OTHER, KEPT].sort());
    for (const s of report.sessions) {
      expect(s.bytes).toBe(duOf('-sb', s.path));
      expect(s.disk).toBe(duOf('-sB1', s.path));
    }
    const paths = report.sessions.map((s) => s.path);
    expect(report.total).toEqual({ bytes: duTotal(['-sbc'], paths), disk: duTotal(['-sc', '-B1'], paths) });
    expect(report.foreign.map((f) => f.name)).toEqual(['imposter', 'index.sqlite', 'notes']);
  });
});

function duOf(flag: string, path: string): number {
  const r = spawnSync('du', [flag, path], { encoding: 'utf8' });
  return Number(r.stdout.split('\t')[0]);
}

function duTotal(flags: string[], paths: string[]): number {
  const r = spawnSync('du', [...flags, ...paths], { encoding: 'utf8' });
  return Number(r.stdout.trim().split('\n').at(-1)!.split('\t')[0]);
}
