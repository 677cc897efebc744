import { parseMapping } from '../mapping/mapping-input.js';
import type { KnownSchema } from './known-schema.js';
import { OPEN_WEBUI_MESSAGES_POSTGRES, OPEN_WEBUI_POSTGRES } from './open-webui-postgres.js';

// Open WebUI keeps times in epoch seconds; a value too large for seconds is read as ms or ns.
const seconds = (t: string) =>
  `case when ${t} > 100000000000000 then ${t} / 1000000000.0 when ${t} > 100000000000 then ${t} / 1000.0 else ${t} end`;
const role = (r: string) => `case when ${r} in ('user', 'assistant', 'system') then ${r} else 'assistant' end`;

// The messages of the chat's JSON tree (`chat.history.messages`), ids prefixed with the chat's
// id as the chat_message table keys them, so a chat reads the same before and after migrating.
const treeNodes = (where: string) => `select c.id || '-' || m.key as id, c.id as session_id,
    ${role(`json_extract(m.value, '$.role')`)} as role,
    coalesce(nullif(json_extract(m.value, '$.content'), ''), '[error] ' || json_extract(m.value, '$.error.content'),
      json_extract(m.value, '$.content')) as content,
    case when json_extract(m.value, '$.parentId') is null then null else c.id || '-' || json_extract(m.value, '$.parentId') end as predecessor,
    ${seconds(`coalesce(json_extract(m.value, '$.timestamp'), c.created_at)`)} as created_at,
    json_extract(m.value, '$.usage.total_tokens') as tokens,
    '[]' as inline_tools,
    case when coalesce(json_array_length(m.value, '$.childrenIds'), 0) > 0 then 0 else 1 end as leaf,
    case when json_type(m.value, '$.done') = 'false' then 1 else 0 end as streaming,
    json_object('model', json_extract(m.value, '$.model')) as metadata
  from chat c, json_each(c.chat, '$.history.messages') m where c.id = :session_id${where}`;

const ordered = (union: string) => `select id, session_id, row_number() over (order by created_at, id) as seq, role,
  content, predecessor, null as caller, created_at, tokens, inline_tools,
  case when leaf = 0 then 0 when role = 'user' or streaming = 1 or (role = 'assistant' and coalesce(content, '') = '') then 1
    else 0 end as open,
  metadata from (${union}) as msgs`;

// The time of a chat's newest tree message, as the nodes query reads it.
const TREE_NEWEST = `(select max(${seconds(`coalesce(json_extract(m.value, '$.timestamp'), c.created_at)`)})
    from json_each(c.chat, '$.history.messages') m)`;

const SESSIONS = (head: string) => `select id, ${seconds('created_at')} as created_at, title,
  case when ${head} is null then null else id || '-' || ${head} end as head,
  json_object('user_id', user_id) as metadata
from chat`;

// A node is open (its turn waits, until the quiet time) when nothing continues it and it is a
// prompt, or a reply still streaming: `done: false`, or no text yet (Open WebUI saves a reply's
// placeholder empty, then rewrites it as the answer and its tool calls come).

/**
 * Open WebUI's older store: one `chat` row per conversation, the whole tree in its `chat` JSON
 * (`history.messages` by id, each with `parentId`; `history.currentId` the head). A regenerated
 * reply and an edited prompt are siblings in the tree: `retry-`/`fork-` branches.
 */
export const OPEN_WEBUI_SCHEMA: KnownSchema = Object.freeze({
  name: 'open-webui',
  description: 'Open WebUI chat table (one JSON message tree per chat, history.currentId the head)',
  signature: Object.freeze({ chat: Object.freeze(['id', 'user_id', 'title', 'chat', 'created_at', 'updated_at']) }),
  mapping: parseMapping({
    sessions: {
      query: { sqlite: SESSIONS(`json_extract(chat, '$.history.currentId')`), postgres: OPEN_WEBUI_POSTGRES.sessions },
      json: ['metadata'],
    },
    nodes: {
      query: { sqlite: ordered(treeNodes('')), postgres: OPEN_WEBUI_POSTGRES.nodes },
      json: ['metadata', 'inline_tools'],
    },
    // Open WebUI rewrites a chat's whole JSON at every change: the row itself, unparsed, is the
    // marker's input; only the newest time walks the tree.
    markers: {
      query: {
        sqlite: `select c.id, c.user_id, c.title, c.created_at, c.chat, ${TREE_NEWEST} as newest from chat c`,
        postgres: OPEN_WEBUI_POSTGRES.markers,
      },
    },
  }),
});

// The output items, or none when the column holds no JSON (json_each would fail on it).
const OUTPUT = `case when json_valid(cm.output) then cm.output else '[]' end`;

// A chat_message row's text: its content (a JSON string, or text parts), else (none, or empty)
// the text of its output's message items.
const MESSAGE_TEXT = `coalesce(nullif(
  case when json_valid(cm.content) then case json_type(cm.content)
      when 'text' then json_extract(cm.content, '$')
      when 'array' then (select group_concat(json_extract(p.value, '$.text'), '' order by p.key) from json_each(cm.content) p
        where json_extract(p.value, '$.type') in ('text', 'input_text', 'output_text'))
      else null end
    else cm.content end, ''),
  (select group_concat(json_extract(q.value, '$.text'), '' order by o.key, q.key) from json_each(${OUTPUT}) o, json_each(o.value, '$.content') q
    where json_extract(o.value, '$.type') = 'message' and json_extract(q.value, '$.type') = 'output_text'))`;

/**
 * Open WebUI's newer store: the `chat_message` table, one row per message (`id` =
 * `chat_id-message_id`, `parent_id` the bare message id), Responses-style items in `output`,
 * and `chat.current_message_id` the head. A chat written before the table existed has no rows
 * there: its JSON tree is read instead, with the same ids.
 */
export const OPEN_WEBUI_MESSAGES_SCHEMA: KnownSchema = Object.freeze({
  name: 'open-webui-messages',
  description: 'Open WebUI chat_message table (one row per message; chats without rows read from their JSON tree)',
  signature: Object.freeze({
    chat: Object.freeze(['id', 'user_id', 'title', 'chat', 'created_at', 'current_message_id']),
    chat_message: Object.freeze(['id', 'chat_id', 'parent_id', 'role', 'content', 'output', 'created_at']),
  }),
  mapping: parseMapping({
    sessions: {
      query: {
        sqlite: SESSIONS(`coalesce(current_message_id, json_extract(chat, '$.history.currentId'))`),
        postgres: OPEN_WEBUI_MESSAGES_POSTGRES.sessions,
      },
      json: ['metadata'],
    },
    nodes: {
      query: {
        sqlite: ordered(`select cm.id, cm.chat_id as session_id, ${role('cm.role')} as role, ${MESSAGE_TEXT} as content,
    case when cm.parent_id is null then null else cm.chat_id || '-' || cm.parent_id end as predecessor,
    ${seconds('cm.created_at')} as created_at, null as tokens,
    (select json_group_array(json_extract(o.value, '$.name') order by o.key) from json_each(${OUTPUT}) o
      where json_extract(o.value, '$.type') = 'function_call') as inline_tools,
    case when exists (select 1 from chat_message k where k.chat_id = cm.chat_id
        and k.parent_id = substr(cm.id, length(cm.chat_id) + 2)) then 0 else 1 end as leaf, 0 as streaming,
    json_object('output', case when json_valid(cm.output) then json(cm.output) end) as metadata
  from chat_message cm where cm.chat_id = :session_id
  union all
  ${treeNodes(' and not exists (select 1 from chat_message x where x.chat_id = c.id)')}`),
        postgres: OPEN_WEBUI_MESSAGES_POSTGRES.nodes,
      },
      json: ['metadata', 'inline_tools'],
    },
    // Rows are rewritten in place (a streamed reply): each row the nodes query reads, whole, in
    // id order, and the chat's row (its tree, for a chat without rows, and its head).
    markers: {
      query: {
        sqlite: `select c.id, c.user_id, c.title, c.created_at, c.current_message_id, c.chat,
  (select json_group_array(json_array(cm.id, cm.parent_id, cm.role, cm.content, cm.output, cm.created_at) order by cm.id)
    from chat_message cm where cm.chat_id = c.id) as messages,
  coalesce((select max(${seconds('cm.created_at')}) from chat_message cm where cm.chat_id = c.id), ${TREE_NEWEST}) as newest
from chat c`,
        postgres: OPEN_WEBUI_MESSAGES_POSTGRES.markers,
      },
    },
  }),
});
