// Open WebUI's tables on PostgreSQL (its `chat.chat`, `chat_message.content` and `.output` are
// `json` there; `jsonb` or JSON text read the same, through a cast), read as the SQLite queries
// read them: the same rows give the same nodes, field for field. Ids order by bytes (`collate
// "C"`), as SQLite orders them.

const seconds = (t: string) =>
  `case when ${t} > 100000000000000 then ${t} / 1000000000.0 when ${t} > 100000000000 then ${t} / 1000.0 else ${t} end`;
const role = (r: string) => `case when ${r} in ('user', 'assistant', 'system') then ${r} else 'assistant' end`;
/** The JSON value `v` when it is an array, else an empty one (`jsonb_array_elements` refuses anything else). */
const array = (v: string) => `case when jsonb_typeof(${v}) = 'array' then ${v} else '[]'::jsonb end`;
const number = (v: string) => `case when jsonb_typeof(${v}) = 'number' then (${v})::text::numeric end`;

const HISTORY = `c.chat::jsonb->'history'->'messages'`;

const treeNodes = (where: string) => `select c.id || '-' || m.key as id, c.id as session_id,
    ${role(`m.value->>'role'`)} as role,
    coalesce(nullif(m.value->>'content', ''), '[error] ' || (m.value->'error'->>'content'), m.value->>'content') as content,
    case when m.value->>'parentId' is null then null else c.id || '-' || (m.value->>'parentId') end as predecessor,
    ${seconds(`coalesce(${number(`m.value->'timestamp'`)}, c.created_at)`)} as created_at,
    ${number(`m.value->'usage'->'total_tokens'`)} as tokens,
    '[]'::text as inline_tools,
    case when case when jsonb_typeof(m.value->'childrenIds') = 'array' then jsonb_array_length(m.value->'childrenIds') else 0 end > 0
      then 0 else 1 end as leaf,
    case when m.value->>'done' = 'false' then 1 else 0 end as streaming,
    jsonb_build_object('model', m.value->'model')::text as metadata
  from chat c, jsonb_each(case when jsonb_typeof(${HISTORY}) = 'object' then ${HISTORY} else '{}'::jsonb end) as m
  where c.id = :session_id${where}`;

const ordered = (
  union: string,
) => `select id, session_id, row_number() over (order by created_at, id collate "C") as seq,
  role, content, predecessor, null::text as caller, created_at, tokens, inline_tools,
  case when leaf = 0 then 0 when role = 'user' or streaming = 1 or (role = 'assistant' and coalesce(content, '') = '') then 1
    else 0 end as open,
  metadata from (${union}) as msgs`;

const sessions = (head: string) => `select id, ${seconds('created_at')} as created_at, title,
  case when (${head}) is null then null else id || '-' || (${head}) end as head,
  jsonb_build_object('user_id', user_id)::text as metadata
from chat`;

const OUTPUT = array('cm.output::jsonb');
const CONTENT = 'cm.content::jsonb';

// A chat_message row's text: its content (a JSON string, or text parts), else (none, or empty)
// the text of its output's message items.
const MESSAGE_TEXT = `coalesce(nullif(
  case jsonb_typeof(${CONTENT})
    when 'string' then ${CONTENT} #>> '{}'
    when 'array' then (select string_agg(p->>'text', '' order by o) from jsonb_array_elements(${CONTENT})
        with ordinality as x(p, o) where p->>'type' in ('text', 'input_text', 'output_text'))
    else null end, ''),
  (select string_agg(q->>'text', '' order by oi, qi) from jsonb_array_elements(${OUTPUT}) with ordinality as a(o, oi),
      jsonb_array_elements(${array(`o->'content'`)}) with ordinality as b(q, qi)
    where o->>'type' = 'message' and q->>'type' = 'output_text'))`;

// The time of a chat's newest tree message, as the nodes query reads it.
const TREE_NEWEST = `(select max(${seconds(`coalesce(${number(`m.value->'timestamp'`)}, c.created_at)`)})
    from jsonb_each(case when jsonb_typeof(${HISTORY}) = 'object' then ${HISTORY} else '{}'::jsonb end) as m)`;

/** The PostgreSQL queries of `open-webui` (the chat table's JSON trees). */
export const OPEN_WEBUI_POSTGRES = {
  markers: `select c.id, c.user_id, c.title, c.created_at, c.chat::text as chat, ${TREE_NEWEST} as newest from chat c`,
  sessions: sessions(`chat::jsonb->'history'->>'currentId'`),
  nodes: ordered(treeNodes('')),
};

/** The PostgreSQL queries of `open-webui-messages` (chat_message rows; a chat without rows read from its tree). */
export const OPEN_WEBUI_MESSAGES_POSTGRES = {
  markers: `select c.id, c.user_id, c.title, c.created_at, c.current_message_id, c.chat::text as chat,
  (select json_agg(json_build_array(cm.id, cm.parent_id, cm.role, cm.content::text, cm.output::text, cm.created_at)
      order by cm.id collate "C")::text from chat_message cm where cm.chat_id = c.id) as messages,
  coalesce((select max(${seconds('cm.created_at')}) from chat_message cm where cm.chat_id = c.id), ${TREE_NEWEST}) as newest
from chat c`,
  sessions: sessions(`coalesce(current_message_id, chat::jsonb->'history'->>'currentId')`),
  nodes: ordered(`select cm.id, cm.chat_id as session_id, ${role('cm.role')} as role, ${MESSAGE_TEXT} as content,
    case when cm.parent_id is null then null else cm.chat_id || '-' || cm.parent_id end as predecessor,
    ${seconds('cm.created_at')} as created_at, null::numeric as tokens,
    (select coalesce(jsonb_agg(o->>'name' order by oi), '[]'::jsonb) from jsonb_array_elements(${OUTPUT})
      with ordinality as a(o, oi) where o->>'type' = 'function_call')::text as inline_tools,
    case when exists (select 1 from chat_message k where k.chat_id = cm.chat_id
        and k.parent_id = substr(cm.id, length(cm.chat_id) + 2)) then 0 else 1 end as leaf, 0 as streaming,
    jsonb_build_object('output', cm.output::jsonb)::text as metadata
  from chat_message cm where cm.chat_id = :session_id
  union all
  ${treeNodes(' and not exists (select 1 from chat_message x where x.chat_id = c.id)')}`),
};
