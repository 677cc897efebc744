import { MockLanguageModelV2, simulateReadableStream } from 'ai/test';

type Prompt = Array<{ role: string; content: unknown }>;
type Reply = Awaited<ReturnType<MockLanguageModelV2['doGenerate']>>;

/** One step of a scripted reply: text, or tool calls (id, tool name, arguments). */
export type Step =
  | { text: string; usage: [input: number, output: number] }
  | { calls: Array<[id: string, tool: string, args: Record<string, unknown>]>; usage: [input: number, output: number] };

/**
 * A language model that answers from a script instead of the network: the reply to a prompt is
 * chosen by the text of the last user message, and the step by how many tool results follow it
 * (a step with calls, then the text after their results).
 */
export function scriptedModel(script: Record<string, Step[]>): MockLanguageModelV2 {
  return new MockLanguageModelV2({
    doGenerate: async ({ prompt }) => reply(script, prompt as Prompt),
    doStream: async ({ prompt }) => {
      const { content, finishReason, usage } = reply(script, prompt as Prompt);
      const chunks: unknown[] = [{ type: 'stream-start', warnings: [] }];
      for (const [i, part] of content.entries()) {
        if (part.type === 'text') {
          const id = `text-${i}`;
          chunks.push(
            { type: 'text-start', id },
            { type: 'text-delta', id, delta: part.text },
            { type: 'text-end', id },
          );
        } else chunks.push(part);
      }
      chunks.push({ type: 'finish', finishReason, usage });
      return { stream: simulateReadableStream({ chunks }) as never };
    },
  });
}

function reply(script: Record<string, Step[]>, prompt: Prompt): Reply {
  let lastUser = -1;
  prompt.forEach((m, i) => {
    if (m.role === 'user') lastUser = i;
  });
  const said = textOf(prompt[lastUser]?.content);
  const steps = script[said];
  if (!steps) throw new Error(`the script has no reply to ${JSON.stringify(said)}`);
  const done = prompt.slice(lastUser + 1).filter((m) => m.role === 'tool').length;
  const step = steps[done];
  if (!step) throw new Error(`the script has no step ${done} for ${JSON.stringify(said)}`);
  const usage = { inputTokens: step.usage[0], outputTokens: step.usage[1], totalTokens: step.usage[0] + step.usage[1] };
  if ('text' in step)
    return { content: [{ type: 'text', text: step.text }], finishReason: 'stop', usage, warnings: [] };
  return {
    content: step.calls.map(([toolCallId, toolName, args]) => ({
      type: 'tool-call' as const,
      toolCallId,
      toolName,
      input: JSON.stringify(args),
    })),
    finishReason: 'tool-calls',
    usage,
    warnings: [],
  };
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (typeof p?.text === 'string' ? p.text : '')).join('');
}
