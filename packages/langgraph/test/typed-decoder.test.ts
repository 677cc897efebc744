// TypedDecoder on its own: each msgpack extension code and the JSON fallback rebuilt from data,
// unknown types kept and reported once, bad input a typed error.
import { EntityGitError } from '@entity-git/core';
import { describe, expect, it } from 'vitest';
import { PythonObject, TypedDecoder } from '../src/index.js';
import { Ext, packPython, pyMessage } from './helpers/python-encode.js';

const decodeWith = (value: unknown) => {
  const reported: string[] = [];
  const decoder = new TypedDecoder({ onUnknownType: (t) => reported.push(t) });
  return { value: decoder.decode('msgpack', packPython(value)), reported, decoder };
};

describe('TypedDecoder', () => {
  it('rebuilds the standard types of codes 0, 1 and 3 as JSON values', () => {
    const { value, reported } = decodeWith({
      when: new Ext(3, ['datetime', 'datetime', '2026-01-01T09:00:00.123456+00:00', 'fromisoformat']),
      day: new Ext(3, ['datetime', 'date', '2026-01-01', 'fromisoformat']),
      id: new Ext(0, ['uuid', 'UUID', 'ffffffffffffffffffffffffffffffff']),
      amount: new Ext(0, ['decimal', 'Decimal', '1.10']),
      tags: new Ext(0, ['builtins', 'frozenset', ['a', 'b']]),
      path: new Ext(1, ['pathlib', 'PosixPath', ['/', 'tmp', 'x.txt']]),
      raw: new Uint8Array([1, 2, 3]),
    });
    expect(value).toEqual({
      when: '2026-01-01T09:00:00.123456+00:00',
      day: '2026-01-01',
      id: 'ffffffff-ffff-ffff-ffff-ffffffffffff',
      amount: '1.10',
      tags: ['a', 'b'],
      path: '/tmp/x.txt',
      raw: new Uint8Array([1, 2, 3]),
    });
    expect(reported).toEqual([]);
  });

  it('reads a message of code 5 or 4 (subclasses and chunks too) as a plain message', () => {
    const m = pyMessage({ type: 'human', id: 'h1', content: 'hi' });
    const v1 = new Ext(4, ['langchain.schema.messages', 'HumanMessage', { content: 'hi', type: 'human', id: 'h2' }]);
    const chunk = new Ext(5, [
      'myapp.llm',
      'MyChunk',
      { content: 'x', type: 'AIMessageChunk', id: 'a1' },
      'model_validate_json',
    ]);
    const { value, reported } = decodeWith([m, v1, chunk]);
    expect(value).toEqual([
      expect.objectContaining({ type: 'human', id: 'h1', content: 'hi', example: false }),
      { content: 'hi', type: 'human', id: 'h2' },
      { content: 'x', type: 'ai', id: 'a1' },
    ]);
    expect(reported).toEqual([]);
  });

  it('keeps a value of an unknown type, names it on the message that holds it, reports each type once', () => {
    const os = new Ext(0, ['os', 'system', 'rm -rf /']);
    const inner = new Ext(2, ['myapp', 'Inner', { os }]);
    const message = (id: string) =>
      new Ext(5, [
        'langchain_core.messages.ai',
        'AIMessage',
        { content: 'ok', type: 'ai', id, additional_kwargs: { inner } },
        'model_validate_json',
      ]);
    const { value, reported, decoder } = decodeWith({ messages: [message('a1'), message('a2')], other: inner });
    const out = value as { messages: Array<Record<string, unknown>>; other: unknown };
    expect(out.messages[0]!.python_types).toEqual(['myapp.Inner', 'os.system']);
    const kept = (out.messages[0]!.additional_kwargs as { inner: PythonObject }).inner;
    expect(kept).toBeInstanceOf(PythonObject);
    // Data only: the "constructor" named is never looked up, its argument is kept as text.
    expect(JSON.parse(JSON.stringify(kept))).toEqual({
      python_type: 'myapp.Inner',
      value: { os: { python_type: 'os.system', value: 'rm -rf /' } },
    });
    expect(out.messages[1]!.python_types).toEqual(['myapp.Inner', 'os.system']);
    expect(out.other).toBeInstanceOf(PythonObject);
    // In the order first met: an object's data is decoded before the object.
    expect(reported).toEqual(['os.system', 'myapp.Inner']);
    expect(decoder.unknownTypes).toEqual(['os.system', 'myapp.Inner']);
  });

  it('reads the JSON fallback: lc 2 objects rebuilt, lc 1 messages left for readMessage with their unknown types', () => {
    const decoder = new TypedDecoder();
    const text = JSON.stringify({
      at: { lc: 2, type: 'constructor', id: ['datetime', 'datetime'], method: 'fromisoformat', args: ['2026-01-01'] },
      m: {
        lc: 1,
        type: 'constructor',
        id: ['langchain', 'schema', 'messages', 'AIMessage'],
        kwargs: { content: 'x', extra: { lc: 2, type: 'constructor', id: ['myapp', 'X'], kwargs: { a: 1 } } },
      },
    });
    const out = decoder.decode('json', new TextEncoder().encode(text)) as Record<string, any>;
    expect(out.at).toBe('2026-01-01');
    expect(out.m.kwargs.python_types).toEqual(['myapp.X']);
    expect(JSON.parse(JSON.stringify(out.m.kwargs.extra))).toEqual({ python_type: 'myapp.X', value: { a: 1 } });
  });

  it('reads null, empty and bytes; refuses what does not decode with INVALID_NODE', () => {
    const decoder = new TypedDecoder();
    expect(decoder.decode('null', new Uint8Array())).toBeNull();
    expect(decoder.decode('empty', null)).toBeUndefined();
    expect(decoder.decode('bytes', new Uint8Array([7]))).toEqual(new Uint8Array([7]));
    for (const [type, data] of [
      ['msgpack', new Uint8Array([0xc1])],
      ['msgpack', packPython(new Ext(5, [1, 2]))],
      ['json', new TextEncoder().encode('{')],
      ['pickle', new Uint8Array([0x80])],
    ] as const) {
      let err: unknown;
      try {
        decoder.decode(type, data);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(EntityGitError);
      expect((err as EntityGitError).code).toBe('INVALID_NODE');
    }
  });
});
