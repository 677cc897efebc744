import { describe, expect, it } from 'vitest';
import { messageNodes, type StoredMessage, type ThreadWalk } from '../src/message-nodes.js';
import { storedSeconds } from '../src/stored-time.js';

// The shapes of Mastra 1.x's stored parts (approval states, `output-error` with `errorText`,
// data parts, part-level metadata) come from its published types; 0.24, which the other tests
// run, never writes them. These cases hold the mapping to them.
const walk = (): ThreadWalk => ({ resourceId: 'r', last: 'u0', lastAssistant: null, callers: new Map() });
const assistant = (parts: unknown[], extra: Record<string, unknown> = {}): StoredMessage => ({
  id: 'a',
  threadId: 't',
  role: 'assistant',
  content: JSON.stringify({ format: 2, parts, ...extra }),
  type: 'v2',
  resourceId: 'r',
  createdAt: 100.5,
});
const invocation = (state: string, more: Record<string, unknown> = {}) => ({
  type: 'tool-invocation',
  toolInvocation: { state, toolCallId: 'c', toolName: 'search', args: { q: 1 }, ...more },
  providerMetadata: { p: { cached: true } },
});

describe('messageNodes', () => {
  it('takes each result out of its call into a tool node; a failed call (1.x) is a result marked isError', () => {
    const w = walk();
    const { nodes, open } = messageNodes(
      assistant(
        [
          invocation('result', { result: [1, 2] }),
          invocation('output-error', { toolCallId: 'd', errorText: 'boom' }),
          { type: 'data-progress', data: { done: true } },
          { type: 'step-start' },
          { type: 'text', text: 'Done.', createdAt: 5 },
        ],
        { metadata: { usage: { promptTokens: 3, completionTokens: 4 } }, providerMetadata: { x: 1 }, content: 'Done.' },
      ),
      w,
    );
    expect(open).toBe(false);
    expect(nodes.map((n) => [n.id, n.role, n.predecessor, n.caller, n.content, n.metadata])).toEqual([
      [
        'a',
        'assistant',
        'u0',
        null,
        [
          { ...invocation('result') },
          { ...invocation('output-error', { toolCallId: 'd' }) },
          { type: 'data-progress', data: { done: true } },
          { type: 'step-start' },
          { type: 'text', text: 'Done.', createdAt: 5 },
        ],
        { metadata: { usage: { promptTokens: 3, completionTokens: 4 } }, providerMetadata: { x: 1 }, tokens: 7 },
      ],
      ['a.c', 'tool', 'a', 'a', [1, 2], { toolCallId: 'c', tool: 'search' }],
      ['a.d', 'tool', 'a', 'a', 'boom', { toolCallId: 'd', tool: 'search', state: 'output-error', isError: true }],
    ]);
    expect([w.last, w.lastAssistant, [...w.callers]]).toEqual([
      'a',
      'a',
      [
        ['c', 'a'],
        ['d', 'a'],
      ],
    ]);
  });

  it('a reply is open while a call waits (in flight, or for approval), has results not answered yet, or says nothing', () => {
    for (const state of ['partial-call', 'call', 'approval-requested', 'approval-responded'])
      expect(messageNodes(assistant([{ type: 'text', text: 'x' }, invocation(state)]), walk()).open).toBe(true);
    expect(messageNodes(assistant([invocation('result', { result: 1 }), { type: 'step-start' }]), walk()).open).toBe(
      true,
    );
    expect(messageNodes(assistant([]), walk()).open).toBe(true);
    expect(messageNodes(assistant([invocation('output-denied'), { type: 'text', text: 'ok' }]), walk()).open).toBe(
      false,
    );
    const prompt = { ...assistant([{ type: 'text', text: 'hi' }]), role: 'user' as const };
    expect(messageNodes(prompt, walk()).open).toBe(true);
  });

  it('repeated call ids in one message get a suffix; a call without an id is named by its part', () => {
    const { nodes } = messageNodes(
      assistant([
        invocation('result', { result: 1 }),
        invocation('result', { result: 2 }),
        { type: 'tool-invocation', toolInvocation: { state: 'result', toolName: 'x', result: 3 } },
        { type: 'text', text: 'end' },
      ]),
      walk(),
    );
    expect(nodes.map((n) => n.id)).toEqual(['a', 'a.c', 'a.c.2', 'a.2']);
  });

  it("keeps content that is not JSON, or not of a known format, as it is; fields named like the mirror's keys are moved aside", () => {
    const plain = { ...assistant([]), content: 'not { json' };
    expect(messageNodes(plain, walk()).nodes[0]!.content).toBe('not { json');
    const other = { ...assistant([]), content: JSON.stringify({ format: 3, parts: [{ type: 'text', text: 'v5' }] }) };
    expect(messageNodes(other, walk()).nodes[0]!.content).toEqual({ format: 3, parts: [{ type: 'text', text: 'v5' }] });
    const noParts = { ...assistant([]), content: JSON.stringify({ format: 2, content: 'only text', pending: true }) };
    expect(messageNodes(noParts, walk()).nodes[0]).toMatchObject({
      content: 'only text',
      metadata: { 'content.pending': true },
    });
    const elsewhere = { ...assistant([{ type: 'text', text: 'x' }]), resourceId: 'other', type: 'text' };
    expect(messageNodes(elsewhere, walk()).nodes[0]!.metadata).toEqual({ resourceId: 'other', type: 'text' });
  });

  it('a format-1 result without a matching call rides on the latest reply, and with no reply at all on nothing', () => {
    const w = walk();
    const row = (id: string, callId: string): StoredMessage => ({
      id,
      threadId: 't',
      role: 'tool',
      content: JSON.stringify([{ type: 'tool-result', toolCallId: callId, toolName: 'x', result: id }]),
      type: 'tool-result',
      resourceId: 'r',
      createdAt: 1,
    });
    expect(messageNodes(row('r1', 'zz'), w).nodes[0]).toMatchObject({ id: 'r1.zz', caller: null, predecessor: 'u0' });
    expect(w.last).toBe('r1.zz');
    messageNodes(assistant([{ type: 'text', text: 'x' }]), w);
    expect(messageNodes(row('r2', 'zz'), w).nodes[0]).toMatchObject({ id: 'r2.zz', caller: 'a', predecessor: 'a' });
    expect(w.last).toBe('a');
  });
});

describe('storedSeconds', () => {
  it('reads the text forms of libSQL and PostgreSQL, to the microsecond, as the same double a Date gives', () => {
    const ms = Date.UTC(2026, 4, 1, 12, 0, 0, 123);
    expect(storedSeconds('2026-05-01T12:00:00.123Z')).toBe(ms / 1000);
    expect(storedSeconds(new Date(ms))).toBe(ms / 1000);
    expect(storedSeconds('2026-05-01 12:00:00.123')).toBe(ms / 1000);
    expect(storedSeconds('2026-05-01 14:00:00.123+02')).toBe(ms / 1000);
    expect(storedSeconds('2026-05-01 06:30:00.123-05:30')).toBe(ms / 1000);
    expect(storedSeconds('2026-05-01 12:00:00.123456')).toBe((ms * 1000 + 456) / 1e6);
    expect(storedSeconds('2026-05-01 12:00')).toBe(Date.UTC(2026, 4, 1, 12) / 1000);
    expect(storedSeconds(ms)).toBe(ms / 1000);
    expect([storedSeconds('yesterday'), storedSeconds(null), storedSeconds(new Date(Number.NaN))]).toEqual([
      null,
      null,
      null,
    ]);
  });

  it('a wall-clock Date (a PostgreSQL timestamp the driver read in this zone) is read as UTC', () => {
    const zone = process.env.TZ;
    process.env.TZ = 'Asia/Kolkata';
    try {
      const local = new Date(2026, 4, 1, 12, 0, 0, 250);
      expect(storedSeconds(local, true)).toBe(Date.UTC(2026, 4, 1, 12, 0, 0, 250) / 1000);
      expect(storedSeconds(local)).toBe(Date.UTC(2026, 4, 1, 6, 30, 0, 250) / 1000);
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });
});
