import type { DagNode, JsonValue, Session } from '@entity-git/core';

/** The golden session: tool calls (parallel results), a retry, an edited user message, a
 * continue-from-an-old-turn, a pending placeholder, CJK and emoji text. Every id and time fixed. */
export const GOLDEN_SESSION: Session = Object.freeze({
  id: 'golden-1',
  title: 'Golden session',
  agent_id: 'agent-1',
  model: 'claude-sonnet-4.7',
  project_id: null,
  head: 'a7',
  created_at: 1779500000,
  metadata: { lang: 'zh' },
}) as Session;

type Spec = [
  id: string,
  role: DagNode['role'],
  predecessor: string | null,
  caller: string | null,
  content: JsonValue,
  metadata?: JsonValue,
];

const SPECS: Spec[] = [
  ['s1', 'system', null, null, 'You are a helpful coding agent.'],
  ['u1', 'user', 's1', null, '列出 src 目录中的文件 🙂\n请简短回答'],
  [
    'a1',
    'assistant',
    'u1',
    null,
    {
      text: 'Let me look.',
      tool_calls: [
        { id: 'fc_1', name: 'list' },
        { id: 'fc_2', name: 'read' },
      ],
    },
    { tokens: 120 },
  ],
  ['t1', 'tool', 'a1', 'a1', 'a.ts\nb.ts', { tool: 'list' }],
  ['t2', 'tool', 'a1', 'a1', 'export const a = 1; // TODO', { tool: 'read' }],
  ['a2', 'assistant', 't2', null, 'There are two files: a.ts and b.ts. 👍 完成', { usage: { total_tokens: 300 } }],
  [
    'u2',
    'user',
    'a2',
    null,
    [{ type: 'text', text: 'Now grep   for\tTODO in every file, including the tests and the docs folder please' }],
  ],
  ['a3', 'assistant', 'u2', null, 'Calling grep.', { tokens: 50 }],
  ['t3', 'tool', 'a3', 'a3', 'src/a.ts:1: TODO', { tool: 'grep' }],
  ['t4', 'tool', 'a3', 'a3', 'src/b.ts:4: TODO', { tool: 'grep' }],
  ['t5', 'tool', 'a3', 'a3', 'test/a.test.ts:9: TODO', { tool: 'grep' }],
  ['a4', 'assistant', 't5', null, 'Found 3 TODOs.', { tokens: 40 }],
  [
    'a4r',
    'assistant',
    't5',
    null,
    'Found three TODO comments: 😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀',
    { tokens: 41 },
  ],
  ['u2e', 'user', 'a2', null, 'Now grep for FIXME'],
  ['a5', 'assistant', 'u2e', null, 'No FIXME found.'],
  ['u3', 'user', 'a4', null, 'Fix them'],
  ['a6', 'assistant', 'u3', null, '', { pending: true }],
  ['u4', 'user', 'a2', null, '从头开始：总结这个仓库'],
  ['a7', 'assistant', 'u4', null, 'It is a tiny TypeScript repository.'],
];

/** The golden nodes in seq order; created_at steps 1.5 s from the session's creation. */
export function goldenNodes(sessionId = GOLDEN_SESSION.id): DagNode[] {
  return SPECS.map(([id, role, predecessor, caller, content, metadata], i) => ({
    id,
    session_id: sessionId,
    seq: i + 1,
    role,
    content,
    predecessor,
    caller,
    created_at: GOLDEN_SESSION.created_at + 1.5 * (i + 1),
    metadata: metadata ?? null,
  }));
}

/** Something that can take whole nodes: MemoryDag, or any fixture writer. */
export interface NodeSink {
  createSession(session: Partial<Session> & { id: string }): Promise<unknown>;
  addNode(node: DagNode): Promise<unknown>;
  setHead(sessionId: string, nodeId: string | null): Promise<void>;
}

/** Write the golden session into `sink`; `upTo` stops after that many nodes (live syncing). */
export async function writeGolden(sink: NodeSink, options: { sessionId?: string } = {}): Promise<void> {
  const id = options.sessionId ?? GOLDEN_SESSION.id;
  await sink.createSession({ ...GOLDEN_SESSION, id, head: null });
  for (const n of goldenNodes(id)) await sink.addNode(n);
  await sink.setHead(id, GOLDEN_SESSION.head);
}
