import { SEGMENT_BYTES } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { appendFileSync, existsSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, growingSession, tempDir } from './helpers.js';

const nodeId = (seq: number) => `node-${String(seq).padStart(5, '0')}-${'x'.repeat(24)}`;

/** `turns` turns of a user message, a tool call and its result, and a reply, synced one by one. */
async function grownSession(turns: number) {
  const { dag, turns: grow } = growingSession('Segments', nodeId);
  const root = tempDir();
  const mirror = createNodeMirror({ dag, root });
  for (let t = 0; t < turns; t++) {
    await grow(1);
    await mirror.sync('s');
  }
  return { dag, root, dir: mirror.repoPath('s'), nodes: 4 * turns, grow };
}

describe("the mirror's state log, in segments", () => {
  it('seals the live segment past SEGMENT_BYTES; a new process trusts the segments, and rebuilds from the DAG when one is lost', async () => {
    const { dag, root, dir, nodes, grow } = await grownSession(200);
    const state = join(dir, '.git'); // entity-git's files: .git/entity-git-*
    const header = JSON.parse(readFileSync(join(state, 'entity-git-state.json'), 'utf8')) as {
      sealed?: number[];
      bytes: number;
    };
    expect(header.sealed?.length).toBeGreaterThanOrEqual(2);
    header.sealed!.forEach((bytes, k) => {
      expect(bytes).toBeGreaterThanOrEqual(SEGMENT_BYTES);
      expect(statSync(join(state, `entity-git-state.${k}.jsonl`)).size).toBe(bytes);
    });
    // No append rewrote more than a segment: the live one is below the limit.
    expect(statSync(join(state, 'entity-git-state.jsonl')).size).toBeLessThan(SEGMENT_BYTES + 4096);
    const tips = git(dir, 'for-each-ref', '--format=%(refname) %(objectname)');

    // A new process reads the segments: nothing to do, and no node read again.
    expect(await createNodeMirror({ dag, root }).sync('s')).toMatchObject({ noop: true, nodesRead: 0 });
    // One more turn through a new process: it appends to the live segment.
    const next = createNodeMirror({ dag, root });
    await grow(1);
    expect(await next.sync('s')).toMatchObject({ commitsWritten: 1, nodesRead: 4 });
    const tipsAfter = git(dir, 'for-each-ref', '--format=%(refname) %(objectname)');

    // A sealed segment lost: the log is not trusted, the whole DAG is read, the ids do not move.
    unlinkSync(join(state, 'entity-git-state.0.jsonl'));
    expect(await createNodeMirror({ dag, root }).sync('s')).toMatchObject({
      commitsWritten: 0,
      nodesRead: nodes + 4,
      branchesMoved: [],
    });
    expect(git(dir, 'for-each-ref', '--format=%(refname) %(objectname)')).toBe(tipsAfter);
    expect(tipsAfter).not.toBe(tips);
    // Rewritten whole: one live segment, the old sealed ones gone.
    const rewritten = JSON.parse(readFileSync(join(state, 'entity-git-state.json'), 'utf8')) as { sealed?: number[] };
    expect(rewritten.sealed).toBeUndefined();
    expect(existsSync(join(state, 'entity-git-state.1.jsonl'))).toBe(false);
    expect(await createNodeMirror({ dag, root }).sync('s')).toMatchObject({ noop: true, nodesRead: 0 });
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  it('reads the log only up to its last whole summary: a crash that tore an append loses nothing, and a turn writes no other state file', async () => {
    const { dag, root, dir, nodes, grow } = await grownSession(3);
    const state = join(dir, '.git'); // entity-git's files: .git/entity-git-*
    const header = readFileSync(join(state, 'entity-git-state.json'));
    const log = join(state, 'entity-git-state.jsonl');
    const lines = readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => l !== '');
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({
      h: { lastSeq: nodes, nodes, tips: { main: git(dir, 'rev-parse', 'main').trim() } },
    });
    // A torn append: whole records, then a summary cut short. Were the deletion read, the node
    // count would disagree and the whole DAG be read again.
    appendFileSync(log, '\n{"d":"node-00001-xxxxxxxxxxxxxxxxxxxxxxxx"}\n{"h":{"lastSeq":99,"tips":{}');
    expect(await createNodeMirror({ dag, root }).sync('s')).toMatchObject({ noop: true, nodesRead: 0 });
    // Only records, no summary at all: nothing to trust, rebuilt from the DAG with the same ids.
    const tips = git(dir, 'for-each-ref', '--format=%(refname) %(objectname)');
    writeFileSync(log, `${lines.slice(0, -1).join('\n')}\n`);
    expect(await createNodeMirror({ dag, root }).sync('s')).toMatchObject({ commitsWritten: 0, nodesRead: nodes });
    expect(git(dir, 'for-each-ref', '--format=%(refname) %(objectname)')).toBe(tips);
    // A turn appends to the log; the header (config, sealed segments) is not rewritten.
    const mirror = createNodeMirror({ dag, root });
    await mirror.sync('s');
    const headerAt = statSync(join(state, 'entity-git-state.json'), { bigint: true });
    const before = statSync(log).size;
    await grow(1);
    expect(await mirror.sync('s')).toMatchObject({ commitsWritten: 1 });
    const headerAfter = statSync(join(state, 'entity-git-state.json'), { bigint: true });
    expect([headerAfter.ino, headerAfter.mtimeNs]).toEqual([headerAt.ino, headerAt.mtimeNs]);
    expect(statSync(log).size).toBeGreaterThan(before);
    expect(readFileSync(join(state, 'entity-git-state.json')).equals(header)).toBe(true);
    expect(await createNodeMirror({ dag, root }).sync('s')).toMatchObject({ noop: true, nodesRead: 0 });
  });

  it('a node is one compact array record; a log of the object records a development version wrote, or a damaged record, is not trusted', async () => {
    const { dag, root, dir, nodes } = await grownSession(3);
    const log = join(dir, '.git', 'entity-git-state.jsonl');
    const records = readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const kept = records.filter((r) => 'k' in r).map((r) => r.k as unknown[]);
    expect(kept).toHaveLength(nodes);
    expect(records.some((r) => 'n' in r)).toBe(false);
    // The first node: a user message, stored, its file name left out (the one its seq, role and id give).
    const first = kept.find((k) => k[1] === 1)!;
    expect(first).toEqual([
      nodeId(1),
      1,
      'user',
      null,
      null,
      2,
      1779500001,
      'user 1',
      null,
      null,
      git(dir, 'rev-parse', `main:messages/000001-u-${nodeId(1)}.json`).trim(),
    ]);
    // The tool result's record names its tool.
    expect(kept.find((k) => k[1] === 3)!.slice(2, 9)).toEqual([
      'tool',
      nodeId(2),
      nodeId(2),
      2,
      1779500003,
      'tool 3',
      'read',
    ]);

    // The same log as a version before wrote it (one object per node, the file name in it): read
    // as it is, nothing read from the DAG again.
    const asObjects = records.map((r) => {
      if (!('k' in r)) return JSON.stringify(r);
      const [id, seq, role, predecessor, caller, flags, created_at, text, tool, tokens, blob] = r.k as [
        string,
        number,
        'user',
        string | null,
        string | null,
        number,
        number,
        string,
        string | null,
        number | null,
        string,
      ];
      const name = `${String(seq).padStart(6, '0')}-${role[0]}-${id}.json`;
      return JSON.stringify({
        n: {
          id,
          seq,
          role,
          predecessor,
          caller,
          pending: (flags & 1) !== 0,
          created_at,
          text,
          tool,
          tokens,
          name,
          blob,
          stored: true,
        },
      });
    });
    // Nothing published wrote them: the log is a cache, rebuilt from the DAG, the same ids.
    const before = git(dir, 'for-each-ref', '--format=%(refname) %(objectname)');
    writeFileSync(log, `${asObjects.join('\n')}\n`);
    expect(await createNodeMirror({ dag, root }).sync('s')).toMatchObject({ commitsWritten: 0, nodesRead: nodes });
    expect(git(dir, 'for-each-ref', '--format=%(refname) %(objectname)')).toBe(before);

    // A record of the compact form cut short (not a torn line: whole JSON, a field missing): not
    // trusted, rebuilt from the DAG, the same ids.
    const tips = git(dir, 'for-each-ref', '--format=%(refname) %(objectname)');
    writeFileSync(
      log,
      `${records.map((r) => JSON.stringify('k' in r && (r.k as unknown[])[1] === 2 ? { k: (r.k as unknown[]).slice(0, 9) } : r)).join('\n')}\n`,
    );
    expect(await createNodeMirror({ dag, root }).sync('s')).toMatchObject({ commitsWritten: 0, nodesRead: nodes });
    expect(git(dir, 'for-each-ref', '--format=%(refname) %(objectname)')).toBe(tips);
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });
});
