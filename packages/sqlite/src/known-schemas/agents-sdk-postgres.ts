// The OpenAI Agents SDK's tables as its SQLAlchemy session makes them on PostgreSQL (the same
// `agent_sessions` and `agent_messages`, `message_data` text, times `timestamp`), read as the
// SQLite queries read `SQLiteSession`: the same rows give the same nodes, field for field.

/**
 * Seconds since the epoch of a time column of any type: `timestamp` (no zone: read as UTC, as
 * SQLite's `CURRENT_TIMESTAMP` text is), `timestamptz`, or text in either form. The text form
 * carries its zone when it has one; otherwise UTC is added before the cast.
 */
export const pgEpoch = (c: string) =>
  `extract(epoch from (${c}::text || case when ${c}::text ~ '([+-]\\d\\d(:?\\d\\d)?|Z)$' then '' else '+00' end)::timestamptz)`;

const D = 'm.d';
const TYPE = `${D}->>'type'`;
const ROLE = `${D}->>'role'`;

// One item's text: a string content, or its input_text / output_text parts in order.
const TEXT = `case when jsonb_typeof(${D}->'content') = 'string' then ${D}->>'content'
  else (select string_agg(p->>'text', '' order by o) from jsonb_array_elements(
      case when jsonb_typeof(${D}->'content') = 'array' then ${D}->'content' else '[]'::jsonb end) with ordinality as x(p, o)
    where p->>'type' in ('input_text', 'output_text', 'text')) end`;

export const AGENTS_SDK_POSTGRES = {
  // Items are appended (new ids, never reused) and popped (the newest deleted), never rewritten:
  // the count and the newest id move with every change; the session's times with its row.
  markers: `select s.session_id as id, s.created_at::text as created_at, s.updated_at::text as updated_at,
  count(m.id) as items, max(m.id) as last_item, max(${pgEpoch('m.created_at')}) as newest
from agent_sessions s left join agent_messages m on m.session_id = s.session_id group by s.session_id`,
  sessions: `select session_id as id, coalesce(${pgEpoch('created_at')}, 0) as created_at from agent_sessions`,
  nodes: `select m.id::text as id, m.session_id, row_number() over (order by m.id) as seq,
  case when ${TYPE} = 'function_call_output' then 'tool'
    when ${ROLE} = 'user' then 'user'
    when ${ROLE} in ('system', 'developer') then 'system'
    else 'assistant' end as role,
  case when ${TYPE} = 'function_call_output' then ${D}->>'output'
    when ${TYPE} in ('function_call', 'reasoning') then null
    else ${TEXT} end as content,
  (lag(m.id) over (order by m.id))::text as predecessor, null::text as caller,
  coalesce(${pgEpoch('m.created_at')}, 0) as created_at,
  case when ${TYPE} = 'function_call_output' then (select c.message_data::jsonb->>'name' from agent_messages c
    where c.session_id = m.session_id and c.message_data::jsonb->>'type' = 'function_call'
      and c.message_data::jsonb->>'call_id' = ${D}->>'call_id' order by c.id limit 1) end as tool,
  case when lead(m.id) over (order by m.id) is not null then 0
    when ${ROLE} = 'user' or ${TYPE} in ('function_call', 'reasoning') then 1
    else 0 end as open,
  m.message_data::text as metadata
from (select a.*, a.message_data::jsonb as d from agent_messages a where a.session_id = :session_id) as m`,
};
