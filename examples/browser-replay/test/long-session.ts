// A long session for the replay tests and the replay-app bench: `turns` turns on main, each a user
// question, an assistant tool call, the tool's answer (`tools` of them, 1 or 2) and the assistant's
// reply (3 + tools nodes), at fixed times, so the session is the same on every run.
import type { DagSource, DagWriter } from '@entity-git/core';

export const LONG_T0 = 1779600000;

type Row = [
  id: string,
  role: 'user' | 'assistant' | 'tool',
  content: unknown,
  extra?: { caller?: string; metadata?: unknown },
];

export async function seedLongSession(
  store: { dag: DagSource; writer: DagWriter },
  id: string,
  turns: number,
  options: { title?: string; tools?: 1 | 2 } = {},
): Promise<void> {
  const title = options.title ?? `A long session (${turns} turns)`;
  await store.writer.createSession({
    id,
    title,
    agent_id: 'demo-agent',
    model: 'claude-sonnet-4.7',
    created_at: LONG_T0,
  });
  let t = LONG_T0;
  let prev: string | null = null;
  for (let k = 1; k <= turns; k++) {
    const second: Row[] =
      options.tools === 2
        ? [
            [
              `${id}-s${k}`,
              'tool',
              `module ${k}: 12 functions, 3 exports\n`,
              { caller: `${id}-a${k}`, metadata: { tool: 'stat' } },
            ],
          ]
        : [];
    const rows: Row[] = [
      [`${id}-u${k}`, 'user', `Question ${k}: what does step ${k} of the build do?`],
      [`${id}-a${k}`, 'assistant', { text: `Reading step ${k}.`, tool_calls: [{ id: `c${k}`, name: 'read' }] }],
      [
        `${id}-t${k}`,
        'tool',
        `step ${k}: compile module ${k} and link it\n`.repeat(2),
        { caller: `${id}-a${k}`, metadata: { tool: 'read' } },
      ],
      ...second,
      [`${id}-r${k}`, 'assistant', `Step ${k} compiles module ${k} and links it into the bundle.`],
    ];
    for (const [nodeId, role, content, extra] of rows) {
      t += 1;
      await store.writer.appendNode({
        id: nodeId,
        session_id: id,
        role,
        content: content as never,
        predecessor: prev,
        caller: extra?.caller ?? null,
        metadata: (extra?.metadata ?? null) as never,
        created_at: t,
      });
      prev = nodeId;
    }
  }
  await store.writer.setHead(id, prev!);
}
