import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, ToolMessage, type AIMessageFields, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { tool } from '@langchain/core/tools';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';

/**
 * A chat model that answers with the scripted messages in order (a fresh `AIMessage` each call,
 * tool calls and usage as given), calling `onCall` first (a test's clock). No network.
 */
export class ScriptedChatModel extends BaseChatModel {
  private next = 0;
  constructor(
    private readonly script: readonly AIMessageFields[],
    private readonly onCall: () => void = () => {},
  ) {
    super({});
  }
  _llmType(): string {
    return 'scripted';
  }
  async _generate(_messages: BaseMessage[]): Promise<ChatResult> {
    const fields = this.script[this.next++];
    if (fields === undefined) throw new Error(`the script has no reply ${this.next}`);
    this.onCall();
    const message = new AIMessage(fields);
    return { generations: [{ message, text: typeof message.content === 'string' ? message.content : '' }] };
  }
}

export interface AgentOptions {
  /** Tool results take LangGraph's own ids (random uuids) instead of `t-<tool call id>`. */
  randomToolIds?: boolean;
  /** Stop before the tools run (human in the loop), as `compile({ interruptBefore })` does. */
  interruptBeforeTools?: boolean;
  /** Called before each model reply and each tool result (a test's clock: `clock.tick`). */
  onStep?: () => void;
}

/**
 * The usual LangGraph agent: `StateGraph(MessagesAnnotation)`, a model node, a `ToolNode` with
 * two tools (`weather`, `forecast`), `toolsCondition` between them, compiled with the saver.
 */
export function agent(saver: BaseCheckpointSaver, script: readonly AIMessageFields[], options: AgentOptions = {}) {
  const step = options.onStep ?? (() => {});
  const model = new ScriptedChatModel(script, step);
  const answer =
    (text: (city: string) => string) =>
    async ({ city }: { city: string }, config: { toolCall?: { id?: string } }) => {
      step();
      const callId = config.toolCall?.id ?? '';
      if (options.randomToolIds) return text(city);
      return new ToolMessage({ id: `t-${callId}`, content: text(city), tool_call_id: callId });
    };
  const city = z.object({ city: z.string() });
  const tools = [
    tool(
      answer((c) => `Sunny, 18 °C in ${c}`),
      { name: 'weather', description: 'Current weather', schema: city },
    ),
    tool(
      answer((c) => `Cloudy tomorrow in ${c}`),
      { name: 'forecast', description: 'Tomorrow', schema: city },
    ),
  ];
  return new StateGraph(MessagesAnnotation)
    .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode('tools', new ToolNode(tools))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', toolsCondition)
    .addEdge('tools', 'agent')
    .compile({ checkpointer: saver, ...(options.interruptBeforeTools ? { interruptBefore: ['tools'] } : {}) });
}

export type Agent = ReturnType<typeof agent>;
