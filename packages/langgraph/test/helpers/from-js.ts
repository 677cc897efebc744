import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { type CheckpointSpec, type MessageSpec, pyMessage } from './python-store.js';

/** Whether a value is a LangChain message as the JS savers revive them. */
function isMessage(v: unknown): v is Record<string, unknown> & { _getType(): string } {
  return v !== null && typeof v === 'object' && typeof (v as { _getType?: unknown })._getType === 'function';
}

/** The same message with Python's fields: what Python LangGraph stores for it. */
function specOf(m: Record<string, unknown> & { _getType(): string }): MessageSpec {
  const spec: MessageSpec = { type: m._getType() as MessageSpec['type'], id: String(m.id), content: m.content };
  if (typeof m.name === 'string') spec.name = m.name;
  if (Array.isArray(m.tool_calls) && m.tool_calls.length > 0)
    spec.tool_calls = m.tool_calls as MessageSpec['tool_calls'];
  if (m.usage_metadata) spec.usage_metadata = m.usage_metadata as Record<string, unknown>;
  if (typeof m.tool_call_id === 'string') spec.tool_call_id = m.tool_call_id;
  if (m.additional_kwargs) spec.additional_kwargs = m.additional_kwargs as Record<string, unknown>;
  if (m.response_metadata) spec.response_metadata = m.response_metadata as Record<string, unknown>;
  return spec;
}

function toPython(v: unknown): unknown {
  if (isMessage(v)) return pyMessage(specOf(v));
  if (Array.isArray(v)) return v.map(toPython);
  if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype)
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toPython(x)]));
  return v;
}

/**
 * The checkpoints a LangGraph.js run wrote for `thread`, as Python LangGraph would have written
 * the same conversation: the same checkpoint ids, times, channels and messages, each message
 * with Python's fields and defaults.
 */
export async function pythonCopy(saver: BaseCheckpointSaver, thread: string): Promise<CheckpointSpec[]> {
  const out: CheckpointSpec[] = [];
  for await (const t of saver.list({ configurable: { thread_id: thread } })) {
    out.push({
      thread,
      id: t.checkpoint.id,
      parent: (t.parentConfig?.configurable?.checkpoint_id as string | undefined) ?? null,
      ts: t.checkpoint.ts,
      values: toPython(t.checkpoint.channel_values) as Record<string, unknown>,
      versions: Object.fromEntries(
        Object.entries(t.checkpoint.channel_versions).map(([k, n]) => [k, Number.parseInt(String(n), 10)]),
      ),
      metadata: JSON.parse(JSON.stringify(t.metadata ?? {})) as Record<string, unknown>,
    });
  }
  return out.reverse();
}
