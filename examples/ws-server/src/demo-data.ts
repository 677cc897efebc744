// Two sessions to look at when the DAG is empty (`--demo`), and the fixture of the tests: fixed
// ids and times, so their commit ids are the same on every machine and in the browser.
import type { DagNode, DagWriter, DagSource, JsonValue } from '@entity-git/core';

export const DEMO_SESSION = 'demo-replay';
export const NOTES_SESSION = 'lexer-notes';
const T0 = 1779500000;

type Row = [
  id: string,
  role: DagNode['role'],
  predecessor: string | null,
  content: JsonValue,
  extra?: { caller?: string; metadata?: JsonValue },
];

/**
 * `demo-replay`: five turns on `main` with tool calls, and a retry of turn 3's answer
 * (branch `retry-d-a3r`, three turns). HEAD is `main`.
 */
const DEMO: Row[] = [
  ['d-s1', 'system', null, 'You are a careful coding agent.'],
  ['d-u1', 'user', 'd-s1', 'What is in src/?'],
  [
    'd-a1',
    'assistant',
    'd-u1',
    { text: 'Let me list it.', tool_calls: [{ id: 'fc1', name: 'list' }] },
    { metadata: { tokens: 40 } },
  ],
  ['d-t1', 'tool', 'd-a1', 'parser.ts\nlexer.ts\nindex.ts', { caller: 'd-a1', metadata: { tool: 'list' } }],
  ['d-a1b', 'assistant', 'd-t1', 'src/ holds parser.ts, lexer.ts and index.ts.', { metadata: { tokens: 30 } }],
  ['d-u2', 'user', 'd-a1b', 'Find every TODO'],
  ['d-a2', 'assistant', 'd-u2', 'Searching.', { metadata: { tokens: 20 } }],
  ['d-g1', 'tool', 'd-a2', 'parser.ts:3: // TODO handle empty input', { caller: 'd-a2', metadata: { tool: 'grep' } }],
  ['d-g2', 'tool', 'd-a2', 'lexer.ts:9: // TODO unicode escapes', { caller: 'd-a2', metadata: { tool: 'grep' } }],
  ['d-a2b', 'assistant', 'd-g2', 'Two TODOs: parser.ts:3 and lexer.ts:9.', { metadata: { tokens: 25 } }],
  ['d-u3', 'user', 'd-a2b', 'Fix the TODO in parser.ts'],
  ['d-a3', 'assistant', 'd-u3', 'Editing parser.ts.', { metadata: { tokens: 20 } }],
  ['d-t3', 'tool', 'd-a3', 'parser.ts: 1 hunk applied', { caller: 'd-a3', metadata: { tool: 'edit' } }],
  ['d-a3b', 'assistant', 'd-t3', 'parse("") now returns an empty program.', { metadata: { tokens: 30 } }],
  [
    'd-a3r',
    'assistant',
    'd-t3',
    'parse("") now throws a clear EmptyInput error instead.',
    { metadata: { tokens: 32 } },
  ],
  ['d-u4', 'user', 'd-a3b', 'Run the tests'],
  ['d-a4', 'assistant', 'd-u4', 'Running them.', { metadata: { tokens: 10 } }],
  ['d-t4', 'tool', 'd-a4', '12 passed, 0 failed', { caller: 'd-a4', metadata: { tool: 'test' } }],
  ['d-a4b', 'assistant', 'd-t4', 'All 12 tests pass.', { metadata: { tokens: 10 } }],
  ['d-u5', 'user', 'd-a4b', 'Write a changelog entry'],
  [
    'd-a5',
    'assistant',
    'd-u5',
    'Added "parser: empty input yields an empty program" to CHANGELOG.md.',
    { metadata: { tokens: 35 } },
  ],
];

/** `lexer-notes`: two turns, no branch, no project. */
const NOTES: Row[] = [
  ['n-u1', 'user', null, 'Explain what lexer.ts does'],
  ['n-a1', 'assistant', 'n-u1', 'It turns source text into tokens: identifiers, numbers, strings, punctuation.'],
  ['n-u2', 'user', 'n-a1', 'And the unicode TODO?'],
  ['n-a2', 'assistant', 'n-u2', 'String literals do not decode \\u{…} escapes yet.'],
];

async function write(
  w: DagWriter,
  sessionId: string,
  title: string,
  created: number,
  rows: Row[],
  head: string,
): Promise<void> {
  await w.createSession({
    id: sessionId,
    title,
    agent_id: 'demo-agent',
    model: 'claude-sonnet-4.7',
    created_at: created,
  });
  let t = created;
  for (const [id, role, predecessor, content, extra] of rows) {
    t += 2;
    await w.appendNode({
      id,
      session_id: sessionId,
      role,
      content,
      predecessor,
      caller: extra?.caller ?? null,
      metadata: extra?.metadata ?? null,
      created_at: t,
    });
  }
  await w.setHead(sessionId, head);
}

/** Write the demo sessions unless the DAG has them already; returns the ids written. */
export async function seedDemo(store: { dag: DagSource; writer: DagWriter }): Promise<string[]> {
  const written: string[] = [];
  if ((await store.dag.getSession(DEMO_SESSION)) === null) {
    await write(store.writer, DEMO_SESSION, 'Fix the parser TODOs', T0, DEMO, 'd-a5');
    written.push(DEMO_SESSION);
  }
  if ((await store.dag.getSession(NOTES_SESSION)) === null) {
    await write(store.writer, NOTES_SESSION, 'Lexer notes', T0 + 3600, NOTES, 'n-a2');
    written.push(NOTES_SESSION);
  }
  return written;
}
