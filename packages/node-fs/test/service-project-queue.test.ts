import { createIsoGitEngine, createProjectGit } from '@entity-git/project';
import { createMirrorService, MemoryDag, type Mirror, type ProjectGit, type ServiceEvents } from '@entity-git/core';
import { createNodeMirror, nodeStorage } from '@entity-git/node-fs';
import { createNodeProjectGit, workdirJournal, workdirLock } from '@entity-git/project/node';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, patched, tempDir, userRepo } from './helpers.js';

/**
 * Several turns of a project-bound session notified back to back, never drained in between:
 * every turn gets its own agent commit, labelled from its own session commit (native git judges).
 */

const ENGINES: { name: string; projectGit: (dir: string) => ProjectGit }[] = [
  { name: 'native git', projectGit: (dir) => createNodeProjectGit({ dir }) },
  {
    name: 'isomorphic-git',
    projectGit: (dir) =>
      createProjectGit({
        engine: createIsoGitEngine({ storage: nodeStorage() }),
        lock: workdirLock({ dir }),
        journal: workdirJournal({ dir }),
      }),
  },
];
const TURNS = 3;

async function boundSession(
  workdir: string,
  projectGit: ProjectGit,
  wrap: (m: Mirror) => Mirror = (m) => m,
  beforeTurnWaitMs?: number,
) {
  const dag = new MemoryDag();
  await dag.createSession({ id: 'sess', model: 'claude-sonnet-4.7', created_at: 1779500000 });
  const project = await dag.createProject({ name: 'Wiki', workdir });
  await dag.addSessionToProject(project.id, 'sess');
  const mirror = createNodeMirror({ dag, root: tempDir() });
  const service = createMirrorService({
    mirror: wrap(mirror),
    dag,
    projects: dag,
    projectGit,
    ...(beforeTurnWaitMs === undefined ? {} : { beforeTurnWaitMs }),
  });
  const events: ServiceEvents['project'][] = [];
  const skipped: ServiceEvents['skipped'][] = [];
  const failed: ServiceEvents['failed'][] = [];
  service.on('project', (e) => events.push(e));
  service.on('skipped', (e) => skipped.push(e));
  service.on('failed', (e) => failed.push(e));
  return { dag, mirror, service, events, skipped, failed };
}

/** A turn of four nodes (user, assistant calling a tool, the tool's result, the final reply); returns its last node. */
async function appendTurn(dag: MemoryDag, t: number, prev: string | null): Promise<string> {
  const base = 1779500000 + t * 10;
  await dag.appendNode({
    id: `u${t}`,
    session_id: 'sess',
    role: 'user',
    content: `Turn ${t}:   edit the file`,
    predecessor: prev,
    created_at: base,
  });
  await dag.appendNode({
    id: `a${t}`,
    session_id: 'sess',
    role: 'assistant',
    content: 'writing',
    predecessor: `u${t}`,
    created_at: base + 1,
  });
  await dag.appendNode({
    id: `t${t}`,
    session_id: 'sess',
    role: 'tool',
    content: 'ok',
    predecessor: `a${t}`,
    caller: `a${t}`,
    created_at: base + 2,
    metadata: { tool: 'write' },
  });
  await dag.appendNode({
    id: `b${t}`,
    session_id: 'sess',
    role: 'assistant',
    content: `done ${t}`,
    predecessor: `t${t}`,
    created_at: base + 3,
  });
  return `b${t}`;
}

/** What agentCommits should list: one commit per turn, labelled from the session's commit of it, holding `file(turn)`. */
function oneCommitPerTurn(sessions: Map<number, string>, file: (turn: number) => string) {
  return Array.from({ length: TURNS }, (_, i) => ({
    subject: `[agent sess] turn ${i + 1}: Turn ${i + 1}: edit the file`,
    committer: 'agent (claude-sonnet-4.7 via OpenProgram)',
    turn: i + 1,
    sessionCommit: sessions.get(i + 1),
    files: [file(i + 1)],
  }));
}

/** The session repository's commit of each turn, by its trailers: turn → sha (and the Node trailer agrees). */
function sessionCommits(sessionRepo: string): Map<number, string> {
  const out = new Map<number, string>();
  const log = git(
    sessionRepo,
    'log',
    '--format=%H%x1f%(trailers:key=Turn,valueonly,separator=)%x1f%(trailers:key=Node,valueonly,separator=)',
    'main',
  )
    .trim()
    .split('\n');
  for (const line of log) {
    const [sha, turn, node] = line.split('\x1f');
    expect(node).toBe(`b${turn}`);
    out.set(Number(turn), sha!);
  }
  return out;
}

/** The agent commits of the project repository, oldest first. */
function agentCommits(workdir: string) {
  const log = git(
    workdir,
    'log',
    '--reverse',
    '--format=%H%x1f%s%x1f%cn%x1f%(trailers:key=Turn,valueonly,separator=)%x1f%(trailers:key=Session-Commit,valueonly,separator=)%x1e',
    'main',
  );
  return log
    .split('\x1e')
    .map((r) => r.trim())
    .filter((r) => r !== '')
    .slice(1)
    .map((r) => {
      const [sha, subject, committer, turn, sessionCommit] = r.split('\x1f');
      return {
        subject,
        committer,
        turn: Number(turn),
        sessionCommit,
        files: git(workdir, 'show', '--name-only', '--format=', sha!).trim().split('\n'),
      };
    });
}

/** A mirror whose syncs wait until `release()`. */
function heldSync() {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const held = (m: Mirror): Mirror =>
    patched(m, {
      sync: async (id, o) => {
        await gate;
        return m.sync(id, o);
      },
    });
  return { held, release };
}

describe.each(ENGINES)('the service with a project, turns queued without drain ($name)', ({ projectGit }) => {
  it.each([
    ['a different file each turn', (t: number) => `f${t}.ts`],
    ['the same file each turn', (_t: number) => 'a.ts'],
  ] as const)('one agent commit per turn, each labelled from its own session commit: %s', async (_name, fileOf) => {
    const workdir = userRepo();
    const { dag, mirror, service, events, skipped, failed } = await boundSession(
      workdir,
      projectGit(tempDir('eg-locks-')),
    );

    let prev: string | null = null;
    for (let t = 1; t <= TURNS; t++) {
      const snapshot = await service.beforeTurn('sess');
      expect(snapshot).not.toBeNull();
      writeFileSync(join(workdir, fileOf(t)), `export const turn = ${t};\n`);
      prev = await appendTurn(dag, t, prev);
      service.notify('sess', { touchedPaths: [fileOf(t)], snapshot });
      // no drain: the dispatcher goes straight on with the next turn
    }
    await service.drain();

    expect(failed).toEqual([]);
    expect(skipped).toEqual([]);
    expect(events.map((e) => [e.result.status, e.result.status === 'committed' ? e.result.turn : null])).toEqual(
      Array.from({ length: TURNS }, (_, i) => ['committed', i + 1]),
    );
    const sessions = sessionCommits(mirror.repoPath('sess'));
    expect(sessions.size).toBe(TURNS);
    expect(agentCommits(workdir)).toEqual(oneCommitPerTurn(sessions, fileOf));
    expect(git(workdir, 'show', `main:${fileOf(TURNS)}`)).toBe(`export const turn = ${TURNS};\n`);
    expect(git(workdir, 'status', '--porcelain')).toBe('');
  });

  it.each([
    ["the dispatcher names each turn's last node", true],
    ['the service takes the newest node at notify', false],
  ] as const)('reports that queue up behind a running sync keep their own turns: %s', async (_name, named) => {
    const workdir = userRepo();
    // The first sync is held until every turn is notified, so all three reports wait behind it.
    const { held, release } = heldSync();
    const pg = projectGit(tempDir('eg-locks-'));
    const { dag, mirror, service, events, failed } = await boundSession(workdir, pg, held);

    let prev: string | null = null;
    for (let t = 1; t <= TURNS; t++) {
      // Snapshots taken straight from projectGit, not through the service (which would wait for the held sync).
      const snapshot = await pg.beforeTurn(workdir);
      writeFileSync(join(workdir, `f${t}.ts`), `export const turn = ${t};\n`);
      prev = await appendTurn(dag, t, prev);
      service.notify(
        'sess',
        named ? { touchedPaths: [`f${t}.ts`], snapshot, node: prev } : { touchedPaths: [`f${t}.ts`], snapshot },
      );
      await new Promise((r) => setTimeout(r, 5));
    }
    release();
    await service.drain();

    expect(failed).toEqual([]);
    const sessions = sessionCommits(mirror.repoPath('sess'));
    // Whatever each call decided (an edit of a later turn looks like someone else's until that turn
    // is reported, and is then landed as a pending edit), every turn lands once, under its own label.
    const landed = events
      .flatMap((e) => [...e.result.deferred, ...(e.result.status === 'committed' ? [e.result] : [])])
      .map((c) => c.turn);
    expect(landed).toEqual([1, 2, 3]);
    expect(agentCommits(workdir)).toEqual(oneCommitPerTurn(sessions, (t) => `f${t}.ts`));
    expect(git(workdir, 'status', '--porcelain')).toBe('');
  });

  it('beforeTurn waits for the previous report at most beforeTurnWaitMs, then snapshots as things are', async () => {
    const workdir = userRepo();
    const { held, release } = heldSync();
    const { dag, service, events } = await boundSession(workdir, projectGit(tempDir('eg-locks-')), held, 150);
    const first = await service.beforeTurn('sess');
    writeFileSync(join(workdir, 'f1.ts'), 'export const turn = 1;\n');
    await appendTurn(dag, 1, null);
    service.notify('sess', { touchedPaths: ['f1.ts'], snapshot: first });
    const started = Date.now();
    const second = await service.beforeTurn('sess');
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    // Turn 1 has not been auto-committed yet: its file is in the snapshot, as uncommitted.
    expect(second?.dirty).toEqual(['f1.ts']);
    release();
    await service.drain();
    expect(events.map((e) => e.result.status)).toEqual(['committed']);
    // Once it ran, the next snapshot does not wait and sees a clean tree.
    expect((await service.beforeTurn('sess'))?.dirty).toEqual([]);
  });
});
