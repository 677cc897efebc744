import { parseMapping } from '../mapping/mapping-input.js';
import type { KnownSchema } from './known-schema.js';

/**
 * The newer schema of that application: one `nodes` row per step, typed `user`, `llm` or `code`
 * (`UserMessage`, `ModelCall`, `FunctionCall` in older rows, with other field names), a 0-based
 * seq, everything else in `data_json`; a tool call is a `code` node with a caller.
 */
export const FLAT_DAG_SCHEMA: KnownSchema = Object.freeze({
  name: 'flat-dag',
  description: 'sessions + nodes (type user|llm|code, predecessor, caller, 0-based seq, data_json)',
  signature: Object.freeze({
    sessions: Object.freeze(['id', 'last_node_id', 'extra_json', 'created_at']),
    nodes: Object.freeze(['id', 'session_id', 'type', 'predecessor', 'caller', 'seq', 'data_json', 'created_at']),
  }),
  mapping: parseMapping({
    sessions: {
      table: 'sessions',
      id: 'id',
      created_at: 'created_at',
      title: 'title',
      agent_id: 'agent_id',
      model: 'model',
      project_id: 'extra_json.project_id',
      head: 'last_node_id',
      metadata: 'extra_json',
      json: ['extra_json'],
    },
    nodes: {
      table: 'nodes',
      id: 'id',
      session_id: 'session_id',
      seq: { column: 'seq', from: 0 },
      role: {
        from: ['data_json.metadata.role', 'type'],
        values: {
          llm: 'assistant',
          code: 'tool',
          UserMessage: 'user',
          ModelCall: 'assistant',
          FunctionCall: 'tool',
        },
      },
      content: ['data_json.output', 'data_json.content', 'data_json.result'],
      predecessor: 'predecessor',
      caller: 'caller',
      created_at: 'created_at',
      tool: ['data_json.name', 'data_json.function_name'],
      tokens: ['data_json.metadata.input_tokens', 'data_json.metadata.output_tokens'],
      inline_tools: {
        from: 'data_json.metadata.tool_calls',
        name: ['name', 'function.name'],
        answered: ['result', 'output'],
      },
      open: {
        roles: ['user'],
        roots: ['system'],
        calls: 'data_json.metadata.tool_calls',
        answered: ['result', 'output'],
        empty: true,
      },
      json: ['data_json'],
    },
  }),
});
