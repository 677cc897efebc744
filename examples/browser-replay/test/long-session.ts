// A long session for the replay tests and the replay-app bench: `turns` turns on main, each a user
// question, an assistant tool call, the tool's answer and the assistant's reply (4 nodes), at
// fixed times, so the session is the same on every run.
import type { DagSource, DagWriter } from '@entity-git/core';

export const LONG_T0 = 1779600000;

export async function seedLongSession(store: { dag: DagSource; writer: DagWriter }, id: string, turns: number, title = `A long session (${turns} turns)`): Promise<void> {
  await store.writer.createSession({ id, title, agent_id: 'demo-agent', model: 'claude-sonnet-4.7', created_at: LONG_T0 });
  let t = LONG_T0;
  let prev: string | null = null;
  for (let k = 1; k <= turns; k++) {
    const rows: Array<[string, 'user' | 'assistant' | 'tool', unknown, { caller?: string; metadata?: unknown }?]> = [
      [`${id}-u${k}`, 'user', `Question ${k}: what does step ${k} of the build do?`],
      [`${id}-a${k}`, 'assistant', { text: `Reading step ${k}.`, tool_calls: [{ id: `c${k}`, name: 'read' }] }],
      [`${id}-t${k}`, 'tool', `step ${k}: compile module ${k} and link it\n`.repeat(2), { caller: `${id}-a${k}`, metadata: { tool: 'read' } }],
      [`${id}-r${k}`, 'assistant', `Step ${k} compiles module ${k} and links it into the bundle.`],
    ];
    for (const [nodeId, role, content, extra] of rows) {
      t += 1;
      await store.writer.appendNode({ id: nodeId, session_id: id, role, content: content as never, predecessor: prev, caller: extra?.caller ?? null, metadata: (extra?.metadata ?? null) as never, created_at: t });
      prev = nodeId;
    }
  }
  await store.writer.setHead(id, prev!);
}
