// Generated hostile transcripts: records in each format's own vocabulary with values of any JSON
// type (ids that collide, parents that loop or point nowhere, content of any shape), lines cut or
// not UTF-8. Every input gives sessions whose nodes the model accepts, or a typed EntityGitError
// (TRANSCRIPT_INVALID, INVALID_ID…), never another throw and never a hang.
import { isEntityGitError, validateNode, validateSession, type JsonValue } from '@entity-git/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseTranscript, TRANSCRIPT_FORMATS } from '../src/index.js';

const RUNS = { numRuns: 150 };
const ids = fc.constantFrom('u1', 'u2', 'a1', 'a2', 't1', '', '..', '../x', 'x'.repeat(1100), '\0', '💥');
const anyValue = fc.oneof(ids, fc.jsonValue({ maxDepth: 2 }), fc.constant(null));
const part = fc.record(
  {
    type: fc.oneof(fc.constantFrom('text', 'tool_use', 'tool_result', 'thinking', 'image'), anyValue),
    text: anyValue,
    id: anyValue,
    tool_use_id: anyValue,
    name: anyValue,
    input: anyValue,
    content: anyValue,
  },
  { requiredKeys: [] },
);
const content = fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.array(part, { maxLength: 4 }), anyValue);
const claudeRecord = fc.record(
  {
    type: fc.oneof(fc.constantFrom('user', 'assistant', 'system', 'summary', 'progress'), anyValue),
    subtype: fc.oneof(fc.constantFrom('compact_boundary', 'turn_duration', 'stop_hook_summary'), anyValue),
    uuid: anyValue,
    parentUuid: anyValue,
    logicalParentUuid: anyValue,
    sessionId: fc.oneof(fc.constantFrom('s1', 's2'), anyValue),
    isSidechain: fc.oneof(fc.boolean(), anyValue),
    timestamp: fc.oneof(fc.constantFrom('2026-01-01T00:00:00Z', 'yesterday'), anyValue),
    message: fc.record(
      {
        role: fc.oneof(fc.constantFrom('user', 'assistant'), anyValue),
        content,
        stop_reason: fc.oneof(fc.constantFrom('end_turn', 'tool_use'), anyValue),
        model: anyValue,
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: [] },
);
const codexRecord = fc.record(
  {
    timestamp: fc.oneof(fc.constantFrom('2026-01-01T00:00:00Z'), anyValue),
    type: fc.oneof(fc.constantFrom('session_meta', 'response_item', 'event_msg', 'turn_context'), anyValue),
    payload: fc.oneof(
      fc.record(
        {
          type: fc.oneof(
            fc.constantFrom('message', 'function_call', 'function_call_output', 'reasoning', 'task_complete'),
            anyValue,
          ),
          role: fc.oneof(fc.constantFrom('user', 'assistant', 'developer'), anyValue),
          content,
          call_id: anyValue,
          id: anyValue,
          cwd: anyValue,
          output: anyValue,
          arguments: anyValue,
        },
        { requiredKeys: [] },
      ),
      anyValue,
    ),
  },
  { requiredKeys: [] },
);
const messageRecord = fc.record(
  {
    role: fc.oneof(fc.constantFrom('user', 'assistant', 'tool', 'system'), anyValue),
    content,
    tool_calls: anyValue,
    tool_call_id: anyValue,
    name: anyValue,
  },
  { requiredKeys: [] },
);

/** JSON lines of the records, some cut short, some garbage, some not UTF-8. */
const encoder = new TextEncoder();
const linesOf = (records: fc.Arbitrary<unknown>) =>
  fc
    .array(
      fc.oneof(
        { weight: 8, arbitrary: records.map((r) => encoder.encode(`${JSON.stringify(r)}\n`)) },
        { weight: 1, arbitrary: records.map((r) => encoder.encode(JSON.stringify(r).slice(0, 7))) },
        { weight: 1, arbitrary: fc.uint8Array({ maxLength: 24 }) },
      ),
      { maxLength: 12 },
    )
    .map((chunks) => {
      const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
      let at = 0;
      for (const c of chunks) {
        out.set(c, at);
        at += c.length;
      }
      return out;
    });

function check(bytes: Uint8Array, format: (typeof TRANSCRIPT_FORMATS)[number], finished: boolean, strict: boolean) {
  try {
    const { sessions } = parseTranscript(bytes, format, 'session-1', { finished, strict });
    for (const { session, nodes } of sessions) {
      validateSession(session);
      for (const n of nodes) validateNode(n as DagNodeLike);
      expect(nodes.map((n) => n.seq)).toEqual([...nodes.map((n) => n.seq)].sort((a, b) => a - b));
      expect(new Set(nodes.map((n) => n.id)).size).toBe(nodes.length);
    }
  } catch (err) {
    if (!isEntityGitError(err)) throw err;
  }
}
type DagNodeLike = Parameters<typeof validateNode>[0];

describe('transcripts, generated', () => {
  for (const [format, records] of [
    ['claude-code', claudeRecord],
    ['codex', codexRecord],
    ['messages', messageRecord],
  ] as const) {
    it(`${format}: nodes the model accepts, or a typed error`, () => {
      fc.assert(
        fc.property(linesOf(records), fc.boolean(), fc.boolean(), (bytes, finished, strict) =>
          check(bytes, format, finished, strict),
        ),
        RUNS,
      );
    });
  }

  it('any bytes, read as any format: sessions or a typed error', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.constantFrom(...TRANSCRIPT_FORMATS), (bytes, format) =>
        check(bytes, format, true, false),
      ),
      // A lone `{` once made the Gemini reader throw JSON's own SyntaxError: tried first, every run.
      { ...RUNS, examples: [[Uint8Array.from([123]), 'gemini']] },
    );
  });

  it('a messages file that is one JSON array of anything', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(messageRecord, anyValue as fc.Arbitrary<JsonValue>), { maxLength: 8 }),
        (messages) => check(encoder.encode(JSON.stringify(messages)), 'messages', true, false),
      ),
      RUNS,
    );
  });
});
