import { parseMapping } from '../mapping/mapping-input.js';
import type { KnownSchema } from './known-schema.js';

const PART_TYPE = `json_extract(p.data, '$.type')`;
// A message's parts in id order (the order they were made within the message).
const parts = (where: string, select: string) =>
  `(select ${select} from part p where p.message_id = m.id and ${where})`;
const TEXT = parts(`${PART_TYPE} = 'text'`, `group_concat(json_extract(p.data, '$.text'), '' order by p.id)`);
const ERROR = `json_extract(m.data, '$.error')`;

/**
 * OpenCode's `opencode.db` (v1.2 and later): `session`, `message` and `part`, JSON in `data`,
 * every time in epoch milliseconds. A session is one path: its messages in `(time_created, id)`
 * order (ids sort wrongly across the time field's wrap), each continuing the one before; a
 * message's reply is its `text` parts, its tools its `tool` parts, its tokens the sum over its
 * `step-finish` parts (a message's own `tokens` hold only its last step's). A sub-agent's session
 * is a session of its own, its parent in the session's metadata.
 */
export const OPENCODE_SCHEMA: KnownSchema = Object.freeze({
  name: 'opencode',
  description: 'OpenCode opencode.db (session + message + part, JSON data, times in ms)',
  signature: Object.freeze({
    session: Object.freeze(['id', 'project_id', 'parent_id', 'title', 'time_created']),
    message: Object.freeze(['id', 'session_id', 'time_created', 'data']),
    part: Object.freeze(['id', 'message_id', 'session_id', 'data']),
  }),
  mapping: parseMapping({
    sessions: {
      query: {
        sqlite: `select id, time_created / 1000.0 as created_at, title, project_id,
  json_object('parent_id', parent_id, 'directory', directory, 'slug', slug, 'version', version) as metadata
from session`,
      },
      json: ['metadata'],
    },
    nodes: {
      query: {
        sqlite: `select m.id, m.session_id, row_number() over (order by m.time_created, m.id) as seq,
  case when json_extract(m.data, '$.role') = 'user' then 'user' else 'assistant' end as role,
  case when ${ERROR} is not null and ${TEXT} is null
    then '[error] ' || coalesce(json_extract(m.data, '$.error.data.message'), json_extract(m.data, '$.error.name'))
    else ${TEXT} end as content,
  lag(m.id) over (order by m.time_created, m.id) as predecessor, null as caller,
  m.time_created / 1000.0 as created_at,
  nullif(coalesce(${parts(
    `${PART_TYPE} = 'step-finish'`,
    `sum(coalesce(json_extract(p.data, '$.tokens.input'), 0) + coalesce(json_extract(p.data, '$.tokens.output'), 0))`,
  )}, json_extract(m.data, '$.tokens.input') + json_extract(m.data, '$.tokens.output')), 0) as tokens,
  ${parts(`${PART_TYPE} = 'tool'`, `json_group_array(json_extract(p.data, '$.tool') order by p.id)`)} as inline_tools,
  case when lead(m.id) over (order by m.time_created, m.id) is not null then 0
    when json_extract(m.data, '$.role') = 'user' then 1
    when ${ERROR} is not null then 0
    when json_extract(m.data, '$.time.completed') is null or json_extract(m.data, '$.finish') = 'tool-calls' then 1
    when exists ${parts(`${PART_TYPE} = 'tool' and json_extract(p.data, '$.state.status') in ('pending', 'running')`, '1')} then 1
    else 0 end as open,
  json_object('data', json(m.data),
    'reasoning', ${parts(`${PART_TYPE} = 'reasoning'`, `group_concat(json_extract(p.data, '$.text'), '' order by p.id)`)}) as metadata
from message m where m.session_id = :session_id`,
      },
      json: ['metadata'],
    },
    // Parts change in place (a tool's state, streamed text): every row the nodes query reads,
    // whole, in a fixed order, so any change to one moves the marker; no JSON is parsed.
    markers: {
      query: {
        sqlite: `select s.id, s.time_created, s.title, s.project_id, s.parent_id, s.directory, s.slug, s.version,
  (select json_group_array(json_array(m.id, m.time_created, m.data) order by m.id)
    from message m where m.session_id = s.id) as messages,
  (select json_group_array(json_array(p.id, p.message_id, p.data) order by p.id)
    from part p where p.message_id in (select m.id from message m where m.session_id = s.id)) as parts,
  (select max(m.time_created) / 1000.0 from message m where m.session_id = s.id) as newest
from session s`,
      },
    },
  }),
});
