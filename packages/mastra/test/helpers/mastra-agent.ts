import { Agent } from '@mastra/core/agent';
import type { MastraStorage } from '@mastra/core/storage';
import { createTool } from '@mastra/core/tools';
import { Memory } from '@mastra/memory';
import { z } from 'zod';
import { scriptedModel, type Step } from './scripted-model.js';

/** What the scripted agent is asked, and how it answers (tool calls, then text). */
export const SCRIPT: Record<string, Step[]> = {
  'What is the weather in Paris and Rome?': [
    {
      calls: [
        ['call-paris', 'weather', { city: 'Paris' }],
        ['call-rome', 'weather', { city: 'Rome' }],
      ],
      usage: [40, 12],
    },
    { text: 'Sunny in Paris, rain in Rome.', usage: [90, 9] },
  ],
  'And tomorrow?': [{ text: 'Tomorrow it is sunny in both.', usage: [120, 8] }],
  'List my notes': [
    { calls: [['call-1', 'notes', {}]], usage: [30, 5] },
    { text: 'You have two notes: groceries and trip.', usage: [50, 11] },
  ],
  'Read the trip note': [
    { calls: [['call-1', 'notes', { name: 'trip' }]], usage: [70, 6] },
    { text: 'The trip is on Friday.', usage: [95, 7] },
  ],
};

const weather = createTool({
  id: 'weather',
  description: 'The weather in a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ context }) => ({ city: context.city, sky: context.city === 'Rome' ? 'rain' : 'sun' }),
});
const notes = createTool({
  id: 'notes',
  description: 'The notes, or one note',
  inputSchema: z.object({ name: z.string().optional() }),
  execute: async ({ context }) => (context.name ? { text: 'Friday' } : ['groceries', 'trip']),
});

/** A real Mastra agent with Memory on `storage`, answering from {@link SCRIPT} (no network). */
export function scriptedAgent(storage: MastraStorage): { agent: Agent; memory: Memory; storage: MastraStorage } {
  const memory = new Memory({ storage, options: { lastMessages: 20, threads: { generateTitle: false } } });
  const agent = new Agent({
    name: 'scripted',
    instructions: 'You are a test agent.',
    model: scriptedModel(SCRIPT),
    tools: { weather, notes },
    memory,
  });
  return { agent, memory, storage };
}

/**
 * One turn: the agent answers `text` in `thread` (through `generate`, or `stream` until its
 * full output); with `keepUsage`, the application records the run's usage in the reply's metadata
 * through Mastra's storage (Mastra keeps none itself).
 */
export async function turn(
  setup: { agent: Agent; storage: MastraStorage },
  thread: string,
  text: string,
  options: { keepUsage?: boolean; stream?: boolean } = {},
): Promise<void> {
  const memory = { thread, resource: 'user-1' };
  let usage: unknown;
  if (options.stream) {
    // `getFullOutput()`, not `text`: it resolves once Mastra has saved the run's messages.
    usage = (await (await setup.agent.stream(text, { memory })).getFullOutput()).usage;
  } else usage = (await setup.agent.generate(text, { memory })).usage;
  if (!options.keepUsage) return;
  const reply = (await setup.storage.getMessages({ threadId: thread, format: 'v2' })).at(-1)!;
  await setup.storage.updateMessages({
    messages: [{ id: reply.id, content: { metadata: { usage: { ...(usage as object) } } } } as never],
  });
}

/**
 * The conversations every store test mirrors: thread `trip` (title and metadata set by the
 * application) — two parallel tool calls and a reply whose usage the application kept, then a
 * streamed turn without tools — and thread `notes`, whose two turns each call a tool with the
 * same call id (`call-1`, as a provider numbering its calls per response does).
 */
export async function haveConversations(setup: {
  agent: Agent;
  memory: Memory;
  storage: MastraStorage;
}): Promise<void> {
  await setup.memory.createThread({
    threadId: 'trip',
    resourceId: 'user-1',
    title: 'Weather for the trip',
    metadata: { topic: 'travel', priority: 2 },
  });
  await turn(setup, 'trip', 'What is the weather in Paris and Rome?', { keepUsage: true });
  await turn(setup, 'trip', 'And tomorrow?', { stream: true });
  await setup.memory.createThread({ threadId: 'notes', resourceId: 'user-1', title: 'Notes' });
  await turn(setup, 'notes', 'List my notes');
  await turn(setup, 'notes', 'Read the trip note');
}
