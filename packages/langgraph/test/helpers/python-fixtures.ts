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

export const TRAVEL = 'py-travel';

/**
 * Time travel as Python LangGraph writes it: two turns; `update_state` on the checkpoint that
 * ended turn 1 with another question, answered (a fork); then a run resumed from the checkpoint
 * where turn 2's question waited for the model, answered anew (a retry).
 */
export function travelThread(): CheckpointSpec[] {
  const m = (type: 'human' | 'ai', id: string, content: string) => pyMessage({ type, id, content });
  const [h1, a1, h2, a2, h3, a3, a4] = [
    m('human', 'h1', 'Hi!'),
    m('ai', 'a1', 'Hello.'),
    m('human', 'h2', 'Weather?'),
    m('ai', 'a2', 'Sunny.'),
    m('human', 'h3', 'Time?'),
    m('ai', 'a3', 'Noon.'),
    m('ai', 'a4', 'Rainy, in fact.'),
  ];
  const steps: Array<[number, number | null, unknown[], Record<string, unknown>]> = [
    [1, null, [h1], { 'branch:to:agent': null }],
    [2, 1, [h1, a1], {}],
    [3, 2, [h1, a1, h2], { 'branch:to:agent': null }],
    [4, 3, [h1, a1, h2, a2], {}],
    [5, 2, [h1, a1, h3], { 'branch:to:agent': null }], // update_state on checkpoint 2
    [6, 5, [h1, a1, h3, a3], {}],
    [7, 3, [h1, a1, h2, a4], {}], // invoke(None, {checkpoint_id: 3})
  ];
  return steps.map(([n, parent, messages, extra]) => ({
    thread: TRAVEL,
    id: `1f0e6a56-0000-6000-800${n}-000000000000`,
    parent: parent === null ? null : `1f0e6a56-0000-6000-800${parent}-000000000000`,
    ts: new Date(Date.UTC(2026, 0, 2, 10, 0, n)).toISOString(),
    values: { messages, ...extra },
    versions: { messages: n, ...Object.fromEntries(Object.keys(extra).map((k) => [k, n])) },
  }));
}
