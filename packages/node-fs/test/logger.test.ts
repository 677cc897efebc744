import {
  consoleLogger,
  createMirror,
  createMirrorService,
  createPacker,
  MemoryDag,
  type LogFields,
  type Logger,
  type LogLevel,
} from '@entity-git/core';
import { createPushScheduler } from '@entity-git/remote';
import { createNodeProjectGit } from '@entity-git/project/node';
import { nodeStorage } from '@entity-git/node-fs';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import http from 'isomorphic-git/http/node';
import { describe, expect, it } from 'vitest';
import { startGitHttpServer } from './git-http-server.js';
import { git, tempDir } from './helpers.js';

type Entry = { level: LogLevel; event: string; fields: LogFields };

function recorder(): { logger: Logger; entries: Entry[] } {
  const entries: Entry[] = [];
  const at = (level: LogLevel) => (event: string, fields: LogFields) => entries.push({ level, event, fields });
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, entries };
}

async function twoTurns(): Promise<MemoryDag> {
  const dag = new MemoryDag();
  await dag.createSession({ id: 's1', title: 'Logged', created_at: 1779500000 });
  await dag.appendNode({ id: 'u1', session_id: 's1', created_at: 1779500001, role: 'user', content: 'one' });
  await dag.appendNode({
    id: 'a1',
    session_id: 's1',
    created_at: 1779500002,
    role: 'assistant',
    content: 'first',
    predecessor: 'u1',
  });
  await dag.appendNode({
    id: 'u2',
    session_id: 's1',
    created_at: 1779500003,
    role: 'user',
    content: 'two',
    predecessor: 'a1',
  });
  await dag.appendNode({
    id: 'a2',
    session_id: 's1',
    created_at: 1779500004,
    role: 'assistant',
    content: 'second',
    predecessor: 'u2',
  });
  return dag;
}

describe('the logger option', () => {
  it('reports each mirror sync with its counts and duration; a failed sync at warn with its code', async () => {
    const { logger, entries } = recorder();
    const root = tempDir();
    const mirror = createMirror({ dag: await twoTurns(), storage: nodeStorage(), root, logger });
    const first = await mirror.sync('s1');
    await mirror.sync('s1');
    await expect(mirror.sync('nope')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
    expect(entries.map((e) => [e.level, e.event])).toEqual([
      ['info', 'mirror.sync'],
      ['debug', 'mirror.sync'],
      ['warn', 'mirror.sync.failed'],
    ]);
    expect(entries[0]!.fields).toMatchObject({
      sessionId: 's1',
      commitsWritten: 2,
      nodesRead: first.nodesRead,
      branchesMoved: ['main'],
      head: 'main',
      noop: false,
    });
    expect(entries[1]!.fields).toMatchObject({ commitsWritten: 0, noop: true });
    expect(entries[2]!.fields).toMatchObject({ sessionId: 'nope', code: 'SESSION_NOT_FOUND' });
    for (const e of entries) expect(e.fields.durationMs).toBeGreaterThanOrEqual(0);
    // The repository is what native git reads, logger or not.
    expect(git(join(root, 's1'), 'rev-list', '--count', 'HEAD').trim()).toBe('2');
  });

  it.each([false, true])(
    'counts the objects and bytes a sync wrote as native git finds them on disk (packTurns %s)',
    async (packTurns) => {
      const { logger, entries } = recorder();
      const root = tempDir();
      const dag = await twoTurns();
      // What git count-objects lists (loose and packed) is what the first sync wrote.
      const mirror = createMirror({ dag, storage: nodeStorage(), root, logger, packTurns });
      await mirror.sync('s1');
      const dir = join(root, 's1');
      const counted = (): Record<string, number> =>
        Object.fromEntries(
          git(dir, 'count-objects', '-v')
            .trim()
            .split('\n')
            .map((l) => {
              const [k, v] = l.split(': ');
              return [k!, Number(v)];
            }),
        );
      const looseFiles = (): { count: number; bytes: number } => {
        let count = 0;
        let bytes = 0;
        for (const fan of readdirSync(join(dir, '.git/objects')).filter((n) => /^[0-9a-f]{2}$/.test(n))) {
          for (const f of readdirSync(join(dir, '.git/objects', fan))) {
            count++;
            bytes += statSync(join(dir, '.git/objects', fan, f)).size;
          }
        }
        return { count, bytes };
      };
      const first = counted();
      const loose = looseFiles();
      const firstPacks = packBytes(dir);
      expect(entries[0]!.fields).toMatchObject({
        objectsWritten: first.count! + first['in-pack']!,
        bytesWritten: loose.bytes + firstPacks,
      });
      expect(loose.count).toBe(first.count);
      // Each way is taken: loose objects alone, and a pack.
      expect(first['in-pack']! > 0).toBe(packTurns);
      // A turn more: only its own objects; nothing at all when the DAG did not change.
      await dag.appendNode({
        id: 'u3',
        session_id: 's1',
        created_at: 1779500005,
        role: 'user',
        content: 'three',
        predecessor: 'a2',
      });
      await dag.appendNode({
        id: 'a3',
        session_id: 's1',
        created_at: 1779500006,
        role: 'assistant',
        content: 'third',
        predecessor: 'u3',
      });
      await mirror.sync('s1');
      await mirror.sync('s1');
      const second = counted();
      expect(entries[1]!.fields).toMatchObject({
        objectsWritten: second.count! + second['in-pack']! - first.count! - first['in-pack']!,
        bytesWritten: looseFiles().bytes + packBytes(dir) - loose.bytes - firstPacks,
      });
      // u3's blob, a3's blob, the messages/ tree, the root tree, the commit; a turn's pack also
      // holds meta.json's blob again (it is not looked up first), which git counts too.
      expect(entries[1]!.fields.objectsWritten).toBe(packTurns ? 6 : 5);
      expect(entries[2]!.fields).toMatchObject({ objectsWritten: 0, bytesWritten: 0, noop: true });
    },
  );

  it('never lets a logger that throws break or change a sync', async () => {
    const boom = (): never => {
      throw new Error('logger bug');
    };
    const root = tempDir();
    const mirror = createMirror({
      dag: await twoTurns(),
      storage: nodeStorage(),
      root,
      logger: { debug: boom, info: boom, warn: boom, error: boom },
    });
    const plain = createMirror({ dag: await twoTurns(), storage: nodeStorage(), root: tempDir() });
    const logged = await mirror.sync('s1');
    expect(logged.commitsWritten).toBe(2);
    expect((await mirror.log('s1')).map((c) => c.sha)).toEqual(
      (await plain.sync('s1'), await plain.log('s1')).map((c) => c.sha),
    );
  });

  it('reports the service outcome, the packer run (objects and the pack file bytes) and the project commit', async () => {
    const { logger, entries } = recorder();
    const storage = nodeStorage();
    const root = tempDir();
    const mirror = createMirror({ dag: await twoTurns(), storage, root });
    const packer = createPacker({ storage, looseObjects: 1, delayMs: 0, logger });
    const service = createMirrorService({ mirror, logger });
    service.notify('s1');
    service.notify('missing');
    await service.drain();
    packer.request(join(root, 's1', '.git'));
    await packer.idle();

    const synced = entries.find((e) => e.event === 'service.synced' && e.fields.sessionId === 's1');
    expect(synced).toMatchObject({ level: 'debug', fields: { commitsWritten: 2, noop: false } });
    expect(entries.find((e) => e.event === 'service.committed')).toMatchObject({
      level: 'info',
      fields: { sessionId: 's1' },
    });
    expect(entries.find((e) => e.event === 'service.failed')).toMatchObject({
      level: 'error',
      fields: { sessionId: 'missing', code: 'SESSION_NOT_FOUND' },
    });

    const packed = entries.find((e) => e.event === 'packer.packed')!;
    const packDir = join(root, 's1', '.git', 'objects', 'pack');
    const packFile = readdirSync(packDir).find((f) => f.endsWith('.pack'))!;
    expect(packed.fields.pack).toContain(packFile.slice(0, -'.pack'.length));
    expect(packed.fields.bytes).toBe(statSync(join(packDir, packFile)).size);
    expect(packed.fields.objects).toBe(
      Number(
        git(root, 'verify-pack', '-v', join(packDir, packFile))
          .split('\n')
          .filter((l) => /^[0-9a-f]{40} /.test(l)).length,
      ),
    );
    expect(git(join(root, 's1'), 'fsck', '--strict').trim()).toBe('');

    const work = tempDir();
    git(work, 'init', '-q');
    const project = createNodeProjectGit({ dir: tempDir(), logger });
    const snapshot = await project.beforeTurn(work);
    writeFileSync(join(work, 'a.txt'), 'agent\n');
    const r = await project.afterTurn({
      workdir: work,
      sessionId: 's1',
      turn: 1,
      userMessage: 'write a',
      model: 'm',
      touchedPaths: ['a.txt'],
      snapshot,
    });
    expect(r.status).toBe('committed');
    const logged = entries.find((e) => e.event === 'project.commit')!;
    expect(logged).toMatchObject({
      level: 'info',
      fields: { workdir: work, status: 'committed', sessionId: 's1', turn: 1, paths: 1 },
    });
    expect(logged.fields.commit).toBe(git(work, 'rev-parse', 'HEAD').trim());
  });

  it('reports each push with what the host took', async () => {
    const { logger, entries } = recorder();
    const server = await startGitHttpServer();
    try {
      const bare = server.createRepo('sessions/s1.git');
      const storage = nodeStorage();
      const root = tempDir();
      await createMirror({ dag: await twoTurns(), storage, root }).sync('s1');
      const scheduler = createPushScheduler({
        remote: { url: server.template, http },
        storage,
        root,
        delayMs: 0,
        logger,
      });
      scheduler.schedule('s1');
      await scheduler.drain();
      await scheduler.close();
      const refs = git(bare, 'for-each-ref', '--format=%(refname)').trim().split('\n');
      expect(entries.map((e) => [e.level, e.event])).toEqual([['info', 'push.pushed']]);
      expect(entries[0]!.fields).toMatchObject({
        sessionId: 's1',
        url: `${server.origin}/sessions/s1.git`,
        pushed: refs.length,
        upToDate: 0,
        rejected: 0,
      });
      expect(git(bare, 'rev-parse', 'refs/heads/main').trim()).toBe(git(join(root, 's1'), 'rev-parse', 'HEAD').trim());
    } finally {
      await server.close();
    }
  });

  it('consoleLogger prints one line per event from its level up', () => {
    const lines: string[] = [];
    const sink = {
      debug: (l: string) => lines.push(`D ${l}`),
      info: (l: string) => lines.push(`I ${l}`),
      warn: (l: string) => lines.push(`W ${l}`),
      error: (l: string) => lines.push(`E ${l}`),
    };
    const log = consoleLogger({ level: 'warn', console: sink });
    log.info('mirror.sync', { sessionId: 's1' });
    log.warn('mirror.sync.failed', { sessionId: 's1', code: 'LOCK_TIMEOUT' });
    log.error('service.failed', { sessionId: 's1', attempts: 5 });
    expect(lines).toEqual([
      'W [entity-git] mirror.sync.failed {"sessionId":"s1","code":"LOCK_TIMEOUT"}',
      'E [entity-git] service.failed {"sessionId":"s1","attempts":5}',
    ]);
  });
});

/** Bytes of the repository's pack files, whole. */
function packBytes(dir: string): number {
  const packs = join(dir, '.git/objects/pack');
  let bytes = 0;
  try {
    for (const f of readdirSync(packs)) if (f.endsWith('.pack')) bytes += statSync(join(packs, f)).size;
  } catch {
    // no pack directory: no packs
  }
  return bytes;
}
