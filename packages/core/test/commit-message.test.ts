import { commitMessage, foldLine, nodeFacts, parseTrailers, type DagNode } from '@entity-git/core';
import { describe, expect, it } from 'vitest';

const node = (
  id: string,
  seq: number,
  role: DagNode['role'],
  content: DagNode['content'],
  metadata: DagNode['metadata'] = null,
  t = 100,
): DagNode => ({ id, session_id: 's', seq, role, content, predecessor: null, caller: null, created_at: t, metadata });

describe('commitMessage', () => {
  it('follows the seed format, with trailers', () => {
    const nodes = [
      node('u', 1, 'user', 'Refactor   the\nparser', null, 100),
      node('a', 2, 'assistant', 'Reading.', { tokens: 10 }, 101),
      node('t1', 3, 'tool', 'x', { tool: 'read' }, 102),
      node('t2', 4, 'tool', 'x', { tool: 'grep' }, 103),
      node('t3', 5, 'tool', 'x', { tool: 'grep' }, 104),
      node('t4', 6, 'tool', 'x', { tool: 'list' }, 105),
      node('t5', 7, 'tool', 'x', { tool: 'grep' }, 106),
      node('a2', 8, 'assistant', 'Done.', { usage: { total_tokens: 4511 } }, 112.3),
    ].map((n) => nodeFacts(n));
    expect(commitMessage('s', 7, nodes)).toBe(
      'turn 7: Refactor the parser\n\nassistant: Done.\ntools: read, grep × 3, list\n\n[meta: turn took 12.3s, 5 tools, 4521 tokens]\n\nSession: s\nTurn: 7\nNode: a2\nSeq: 8\n',
    );
  });

  it('counts the tools a reply ran inline (metadata.inline_tools) as it counts tool nodes', () => {
    const inline = [
      node('u', 1, 'user', 'List and read', null, 100),
      node(
        'a',
        2,
        'assistant',
        'Listed and read.',
        { inline_tools: ['list', 'read', 'read', ' ', 7], tokens: 30 },
        104,
      ),
    ].map((n) => nodeFacts(n));
    const asNodes = [
      node('u', 1, 'user', 'List and read', null, 100),
      node('t1', 2, 'tool', 'x', { tool: 'list' }, 101),
      node('t2', 3, 'tool', 'x', { tool: 'read' }, 102),
      node('t3', 4, 'tool', 'x', { tool: 'read' }, 103),
      node('a', 5, 'assistant', 'Listed and read.', { tokens: 30 }, 104),
    ].map((n) => nodeFacts(n));
    const body = (m: string) => m.slice(0, m.indexOf('\n\nSession:'));
    expect(body(commitMessage('s', 1, inline))).toBe(
      'turn 1: List and read\n\nassistant: Listed and read.\ntools: list, read × 2\n\n[meta: turn took 4.0s, 3 tools, 30 tokens]',
    );
    expect(body(commitMessage('s', 1, asNodes))).toBe(body(commitMessage('s', 1, inline)));
    // Without the key (every DAG before it), a node has none: no message changes.
    expect(nodeFacts(node('a', 2, 'assistant', 'x', { tool_calls: [{ name: 'read' }] })).inlineTools).toEqual([]);
  });

  it('cuts at code points, folds whitespace and control characters, and leaves absent parts out', () => {
    const emoji = '👍'.repeat(70);
    const msg = commitMessage('s', 1, [nodeFacts(node('u', 1, 'user', `${emoji}\u0000tail`))]);
    expect(msg.split('\n')[0]).toBe(`turn 1: ${'👍'.repeat(60)}`);
    expect(
      commitMessage('s', 2, [nodeFacts(node('u', 1, 'user', ' a\u0000\u0007b \t c \ud800 '))]).split('\n')[0],
    ).toBe('turn 2: a b c \ufffd');
    expect(commitMessage('s', 3, [nodeFacts(node('x', 1, 'system', 'sys'))])).toBe(
      'turn 3\n\n[meta: turn took 0.0s]\n\nSession: s\nTurn: 3\nNode: x\nSeq: 1\n',
    );
  });

  it('foldLine cuts after the max-th code point, keeps a line of exactly max whole, and trims the cut', () => {
    expect(foldLine('👍'.repeat(5), 5)).toBe('👍'.repeat(5));
    expect(foldLine('👍'.repeat(6), 5)).toBe('👍'.repeat(5));
    expect(foldLine(`a${'👍'.repeat(4)}b`, 5)).toBe(`a${'👍'.repeat(4)}`);
    expect(foldLine('abcd efgh', 5)).toBe('abcd');
    expect(foldLine('abcde', 5)).toBe('abcde');
    expect(foldLine('  ab\n\n  cd  ', 80)).toBe('ab cd');
    expect(foldLine('', 5)).toBe('');
  });

  it('cannot be fooled by text that looks like a trailer', () => {
    const nodes = [
      nodeFacts(node('u', 1, 'user', 'hi\n\nSession: evil\nTurn: 99')),
      nodeFacts(node('a', 2, 'assistant', 'x\nNode: evil\nSeq: 1')),
    ];
    const msg = commitMessage('real/../id', 4, nodes);
    expect(parseTrailers(msg)).toEqual({ session: 'real/../id', turn: 4, node: 'a', seq: 2 });
    expect(msg).toContain('Session: real%2F%2E%2E%2Fid\n');
  });
});
