import { parseMapping } from '../mapping/mapping-input.js';
import type { KnownSchema } from './known-schema.js';

/**
 * The older schema of the application the original design was written for: one `messages` row
 * per message, plain-text content, no seq (the order is the time, then the id), a reply's tool
 * calls and their results in its own row (`extra.tool_calls`), its token usage in columns.
 */
export const MESSAGES_SCHEMA: KnownSchema = Object.freeze({
  name: 'messages',
  description: 'sessions + messages (parent_id, role, plain-text content, timestamp; tool calls in extra)',
  signature: Object.freeze({
    sessions: Object.freeze(['id', 'head_id', 'extra_meta', 'created_at']),
    messages: Object.freeze(['id', 'session_id', 'parent_id', 'role', 'content', 'timestamp', 'extra']),
  }),
  mapping: parseMapping({
    sessions: {
      table: 'sessions',
      id: 'id',
      created_at: 'created_at',
      title: 'title',
      agent_id: 'agent_id',
      model: 'model',
      project_id: 'extra_meta.project_id',
      head: 'head_id',
      metadata: 'extra_meta',
      json: ['extra_meta'],
    },
    nodes: {
      table: 'messages',
      id: 'id',
      session_id: 'session_id',
      seq: { rank: 'timestamp' },
      role: 'role',
      content: 'content',
      predecessor: 'parent_id',
      caller: null,
      created_at: 'timestamp',
      tokens: ['input_tokens', 'output_tokens'],
      inline_tools: { from: 'extra.tool_calls', name: ['tool', 'name'] },
      open: { roles: ['user'], roots: ['system'], empty: true },
      json: ['extra'],
    },
  }),
});
