import { HumanMessage, type AIMessageFields, type BaseMessage } from '@langchain/core/messages';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { agent } from './agent.js';
import { clock } from './clock.js';

export const TRIP = 'trip';
/** 2026-01-01T00:00:00Z: the clock the scenario starts at. */
export const T0 = 1_767_225_600;

const usage = (input: number, output: number) => ({
  input_tokens: input,
  output_tokens: output,
  total_tokens: input + output,
});

/** The model's replies, in the order the scenario asks for them. */
export const TRIP_SCRIPT: readonly AIMessageFields[] = [
  {
    id: 'a1',
    content: '',
    tool_calls: [
      { id: 'c1', name: 'weather', args: { city: 'Oslo' } },
      { id: 'c2', name: 'weather', args: { city: 'Bergen' } },
    ],
    usage_metadata: usage(20, 10),
  },
  { id: 'a2', content: 'Sunny in Oslo, rain in Bergen.', usage_metadata: usage(30, 12) },
  {
    id: 'a3',
    content: [{ type: 'text', text: 'Let me check the forecast.' }],
    tool_calls: [{ id: 'c3', name: 'forecast', args: { city: 'Oslo' } }],
    usage_metadata: usage(40, 10),
  },
  { id: 'a4', content: 'Cloudy tomorrow.', usage_metadata: usage(15, 5) },
  { id: 'a5', content: "You're welcome!" },
  { id: 'a6', content: 'Snow in Trondheim.', usage_metadata: usage(10, 5) },
  { id: 'a7', content: 'Rain tomorrow, take an umbrella.', usage_metadata: usage(20, 5) },
];

const lastId = (messages: BaseMessage[]) => messages.at(-1)?.id;

/**
 * The scenario the mirror tests share, run by the real LangGraph on `saver`, the clock faked:
 * three turns on thread `trip` (two with tool calls and usage, parallel calls in the first; one
 * without), then LangGraph's time travel twice — `updateState` on the checkpoint that ended
 * turn 1 with a new question, and `invoke` from it; then a run resumed from the checkpoint
 * where turn 2's question waited for the model.
 */
export async function runTrip(saver: BaseCheckpointSaver): Promise<void> {
  const app = agent(saver, TRIP_SCRIPT, { onStep: () => clock.tick() });
  const thread = { configurable: { thread_id: TRIP } };
  clock.start(T0);
  try {
    await app.invoke(
      { messages: [new HumanMessage({ id: 'h1', content: "What's the weather in Oslo and Bergen?" })] },
      thread,
    );
    clock.at(T0 + 60);
    await app.invoke({ messages: [new HumanMessage({ id: 'h2', content: 'And tomorrow in Oslo?' })] }, thread);
    clock.at(T0 + 120);
    await app.invoke({ messages: [new HumanMessage({ id: 'h3', content: 'Thanks!' })] }, thread);

    const history = [];
    for await (const state of app.getStateHistory(thread)) history.push(state);
    const endOfTurn1 = history.find((s) => lastId(s.values.messages) === 'a2' && s.next.length === 0);
    const askedTurn2 = history.find((s) => lastId(s.values.messages) === 'h2' && s.next.includes('agent'));
    if (!endOfTurn1 || !askedTurn2) throw new Error('the checkpoints to travel back to are missing');

    clock.at(T0 + 180);
    const forked = await app.updateState(
      endOfTurn1.config,
      { messages: [new HumanMessage({ id: 'h4', content: 'What about Trondheim?' })] },
      '__start__',
    );
    await app.invoke(null, forked);
    clock.at(T0 + 240);
    await app.invoke(null, askedTurn2.config);
  } finally {
    clock.stop();
  }
}
