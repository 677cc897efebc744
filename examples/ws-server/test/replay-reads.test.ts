// What replay reads on the server: a branch's log through the commit-graph (a live turn on top)
// equal to the walk commit by commit without it, kept by tip; `turn_messages` from the read-ahead
// window equal to core's handler across steps and after a write.
import { createActions } from '@entity-git/core';
import { COMMIT_GRAPH_PATH } from '@entity-git/git';
import { createNodeMirror } from '@entity-git/node-fs';
import { execFileSync } from 'node:child_process';
import { existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_SESSION, NOTES_SESSION } from '../src/index.js';
import { client, dir, server, store, useServer } from './server-helpers.js';

useServer();

describe('replay reads', () => {
  it('the log through the commit-graph equals the walk commit by commit, a live turn on top', async () => {
    const gitdir = join(server.mirror.repoPath(NOTES_SESSION), '.git');
    const graph = join(gitdir, COMMIT_GRAPH_PATH);
    // The graph of every commit so far (native git's: the mirror reads it), then a live turn not in it.
    execFileSync('git', ['--git-dir', gitdir, 'commit-graph', 'write', '--reachable', '--no-progress']);
    expect(existsSync(graph)).toBe(true);
    expect((await client.request('send_message', { session_id: NOTES_SESSION, content: 'past the graph' })).ok).toBe(
      true,
    );
    const fresh = () => createNodeMirror({ dag: store.dag, root: join(dir, 'sessions') });
    const through = await fresh().log(NOTES_SESSION);
    expect(through.length).toBeGreaterThan(1);
    renameSync(graph, `${graph}.away`);
    try {
      expect(await fresh().log(NOTES_SESSION)).toEqual(through);
    } finally {
      renameSync(`${graph}.away`, graph);
    }
    // Kept by tip: a second read is the same, and the caller's copy is its own.
    const m = fresh();
    const first = await m.log(NOTES_SESSION);
    first[0]!.parents.push('x');
    expect(await m.log(NOTES_SESSION)).toEqual(through);
  });

  it("turn_messages from the read-ahead window equals core's, across steps and after a write", async () => {
    const core = createActions({
      dag: store.dag,
      mirror: server.mirror,
      writer: store.writer,
      projects: store.projects,
    });
    const check = async () => {
      const { commits } = await core.git_history({ session_id: DEMO_SESSION });
      for (let i = 0; i < commits.length; i++) {
        const c = commits[i]!;
        const params = {
          session_id: DEMO_SESSION,
          to_node: c.node!,
          to_seq: c.seq!,
          from_seq: commits[i + 2]?.seq ?? 0,
        };
        expect(await server.actions.turn_messages(params)).toEqual(await core.turn_messages(params));
      }
    };
    await check();
    expect((await client.request('send_message', { session_id: DEMO_SESSION, content: 'and then?' })).ok).toBe(true);
    await check();
    const bad = { session_id: DEMO_SESSION, to_node: 'no-such-node', to_seq: 3, from_seq: 0 };
    await expect(server.actions.turn_messages(bad)).rejects.toMatchObject({ code: 'NODE_NOT_FOUND' });
  });
});
