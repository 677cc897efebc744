import { parseMapping } from '../mapping/mapping-input.js';
import { AGENTS_SDK_POSTGRES } from './agents-sdk-postgres.js';
import type { KnownSchema } from './known-schema.js';

// One Responses-API item's text: a string content, or its input_text / output_text parts in order.
const TEXT = `case when json_type(message_data, '$.content') = 'text' then json_extract(message_data, '$.content')
  else (select group_concat(json_extract(p.value, '$.text'), '' order by p.key) from json_each(message_data, '$.content') p
    where json_extract(p.value, '$.type') in ('input_text', 'output_text', 'text')) end`;
const TYPE = `json_extract(message_data, '$.type')`;
const ROLE = `json_extract(message_data, '$.role')`;

/**
 * The OpenAI Agents SDK's `SQLiteSession` (and, on PostgreSQL, its `SQLAlchemySession`, the
 * same tables): `agent_sessions` and `agent_messages`, one
 * Responses-API item a row (`message_data`), in `id` order, times as SQLite `CURRENT_TIMESTAMP`
 * text. No parent column: a session is one path, each item continuing the one before. A tool
 * result is named by its call (`call_id`); reasoning items are nodes of their own, never the reply.
 */
export const AGENTS_SDK_SCHEMA: KnownSchema = Object.freeze({
  name: 'openai-agents',
  description: 'OpenAI Agents SDK SQLiteSession (agent_sessions + agent_messages, one Responses item a row)',
  signature: Object.freeze({
    agent_sessions: Object.freeze(['session_id', 'created_at', 'updated_at']),
    agent_messages: Object.freeze(['id', 'session_id', 'message_data', 'created_at']),
  }),
  mapping: parseMapping({
    sessions: {
      query: {
        sqlite: `select session_id as id, coalesce(unixepoch(created_at), 0) as created_at from agent_sessions`,
        postgres: AGENTS_SDK_POSTGRES.sessions,
      },
    },
    nodes: {
      query: {
        sqlite: `select cast(id as text) as id, session_id, row_number() over (order by id) as seq,
  case when ${TYPE} = 'function_call_output' then 'tool'
    when ${ROLE} = 'user' then 'user'
    when ${ROLE} in ('system', 'developer') then 'system'
    else 'assistant' end as role,
  case when ${TYPE} = 'function_call_output' then json_extract(message_data, '$.output')
    when ${TYPE} in ('function_call', 'reasoning') then null
    else ${TEXT} end as content,
  cast(lag(id) over (order by id) as text) as predecessor, null as caller,
  coalesce(unixepoch(created_at), 0) as created_at,
  case when ${TYPE} = 'function_call_output' then (select json_extract(c.message_data, '$.name') from agent_messages c
    where c.session_id = m.session_id and json_extract(c.message_data, '$.type') = 'function_call'
      and json_extract(c.message_data, '$.call_id') = json_extract(m.message_data, '$.call_id')) end as tool,
  case when lead(id) over (order by id) is not null then 0
    when ${ROLE} = 'user' or ${TYPE} in ('function_call', 'reasoning') then 1
    else 0 end as open,
  message_data as metadata
from agent_messages m where session_id = :session_id`,
        postgres: AGENTS_SDK_POSTGRES.nodes,
      },
      json: ['metadata'],
    },
    // The SDK appends items (AUTOINCREMENT: an id is never used twice) and pops the newest; it
    // never rewrites one. So the count and the newest id move with every change it makes.
    markers: {
      query: {
        sqlite: `select s.session_id as id, s.created_at, s.updated_at, count(m.id) as items, max(m.id) as last_item,
  unixepoch(max(m.created_at)) as newest
from agent_sessions s left join agent_messages m on m.session_id = s.session_id group by s.session_id`,
        postgres: AGENTS_SDK_POSTGRES.markers,
      },
    },
  }),
});
