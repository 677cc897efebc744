// Hand-made Python checkpoints for what a LangGraph.js run cannot write: a value of a type the
// reader does not know, the standard library's types, and the JSON fallback with `lc` objects.
import { type CheckpointSpec, Ext, pyMessage, pythonDict } from './python-encode.js';

export const ODD = 'py-odd';
export const FALLBACK = 'py-json';

const weather = (temp: number) =>
  new Ext(5, ['myapp.models', 'Weather', { city: 'Oslo', temp }, 'model_validate_json']);
const human = pyMessage({ type: 'human', id: 'h1', content: 'Plan my day in Oslo.' });
const asked = pyMessage({
  type: 'ai',
  id: 'a1',
  content: 'Checking the weather.',
  tool_calls: [{ id: 'c1', name: 'weather', args: { city: 'Oslo' } }],
  usage_metadata: { input_tokens: 12, output_tokens: 8, total_tokens: 20 },
  // A value of the application's own pydantic model, and the standard library's types.
  additional_kwargs: {
    forecast: weather(18),
    asked_at: new Ext(3, ['datetime', 'datetime', '2026-01-01T09:00:00+00:00', 'fromisoformat']),
    request: new Ext(0, ['uuid', 'UUID', '0123456789abcdef0123456789abcdef']),
    cities: new Ext(0, ['builtins', 'set', ['Oslo']]),
  },
});
const tool = pyMessage({ type: 'tool', id: 't1', content: 'Sunny, 18 °C', tool_call_id: 'c1', name: 'weather' });
const answer = pyMessage({
  type: 'ai',
  id: 'a2',
  content: [{ type: 'text', text: 'Sunny all day: walk to the fjord.' }],
  usage_metadata: { input_tokens: 30, output_tokens: 9, total_tokens: 39 },
});

const id = (n: number) => `1f0e6a55-0000-6000-800${n}-000000000000`;
const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 9, 0, s)).toISOString();

/** Two turns: a tool call whose message holds a `myapp.models.Weather`, its result, an answer. */
export function oddThread(): CheckpointSpec[] {
  const step = (n: number, messages: unknown[], extra: Record<string, unknown> = {}) => ({
    thread: ODD,
    id: id(n),
    parent: n === 1 ? null : id(n - 1),
    ts: at(n * 2),
    values: { messages, ...extra },
    versions: { messages: n, ...Object.fromEntries(Object.keys(extra).map((k) => [k, n])) },
    // Another channel with a value of another unknown type: not mirrored, not reported.
  });
  return [
    step(1, [human], { 'branch:to:agent': null }),
    step(2, [human, asked], { 'branch:to:tools': null, scratch: new Ext(2, ['myapp.state', 'Scratch', { n: 1 }]) }),
    step(3, [human, asked, tool], { 'branch:to:agent': null }),
    step(4, [human, asked, tool, answer]),
  ];
}

/** LangChain's `{ lc: 1 }` message form, as Python's JSON fallback writes it. */
function lc1(kind: 'HumanMessage' | 'AIMessage', kwargs: Record<string, unknown>) {
  return { lc: 1, type: 'constructor', id: ['langchain', 'schema', 'messages', kind], kwargs };
}

/** One turn in Python's JSON fallback: `lc` 1 messages, an `lc` 2 object of an unknown type. */
export function fallbackThread(): CheckpointSpec[] {
  const q = lc1('HumanMessage', pythonDict({ type: 'human', id: 'jh1', content: 'Plan my day in Oslo.' }));
  const a = lc1(
    'AIMessage',
    pythonDict({
      type: 'ai',
      id: 'ja1',
      content: 'Sunny all day.',
      additional_kwargs: {
        forecast: {
          lc: 2,
          type: 'constructor',
          id: ['myapp', 'models', 'Weather'],
          kwargs: { city: 'Oslo', temp: 18 },
        },
      },
    }),
  );
  return [1, 2].map((n) => ({
    thread: FALLBACK,
    id: id(n + 4),
    parent: n === 1 ? null : id(n + 3),
    ts: at(20 + n),
    values: { messages: n === 1 ? [q] : [q, a] },
    versions: { messages: n },
    serialisation: 'json' as const,
  }));
}
