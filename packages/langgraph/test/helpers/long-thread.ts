import { HumanMessage, type AIMessageFields } from '@langchain/core/messages';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { agent, type Agent } from './agent.js';

/** Deterministic text of about `bytes` bytes (xorshift words), the same on every run. */
function text(seed: number, bytes: number): string {
  let x = seed * 2654435761 + 1;
  const words: string[] = [];
  let n = 0;
  while (n < bytes) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    const w = (x >>> 0).toString(36);
    words.push(w);
    n += w.length + 1;
  }
  return words.join(' ');
}

/** Two replies per turn: a tool call (`weather`), then a text answer of about `bytes` bytes. */
export function longScript(turns: number, bytes: number): AIMessageFields[] {
  const out: AIMessageFields[] = [];
  for (let t = 1; t <= turns; t++) {
    out.push({
      id: `a${t}c`,
      content: '',
      tool_calls: [{ id: `c${t}`, name: 'weather', args: { city: `City ${t}` } }],
    });
    out.push({
      id: `a${t}`,
      content: text(t, bytes),
      usage_metadata: { input_tokens: t, output_tokens: 9, total_tokens: t + 9 },
    });
  }
  return out;
}

/** A thread of long turns on a SQLite checkpointer file: the agent, and how to run turns on it. */
export function longThread(file: string, turns: number, bytes: number) {
  const saver = SqliteSaver.fromConnString(file);
  const app: Agent = agent(saver, longScript(turns, bytes));
  let next = 1;
  return {
    saver,
    /** Runs the next `count` turns on thread `threadId`. */
    async run(threadId: string, count: number): Promise<void> {
      for (const end = next + count; next < end; next++)
        await app.invoke(
          { messages: [new HumanMessage({ id: `h${next}`, content: text(1000 + next, bytes / 4) })] },
          { configurable: { thread_id: threadId } },
        );
    },
  };
}
