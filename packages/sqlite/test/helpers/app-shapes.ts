// The shapes of database the change markers are checked on, each made with its application's own
// SQL (no trigger, no table of entity-git's): entity-git's layout under the default names and under
// other names (adopted as they are), a configured mapping of other tables, and the two known
// schemas. Each says how its application writes a session and a node.
import type { MarkerNode } from '@entity-git/test-utils';
import type { MappingInput, SchemaNames, SqlEngine, SqlStoreCommonOptions } from '../../src/index.js';
import { NODE_COLUMNS, SESSION_COLUMNS } from '../../src/rows.js';
import { FLAT_DAG_DDL } from '../app-databases/fixtures/flat-dag-db.js';
import { MESSAGES_DDL } from '../app-databases/fixtures/messages-db.js';

export type Row = Record<string, unknown>;

export interface AppShape {
  readonly label: string;
  /** The application's DDL: SQLite's as one script, PostgreSQL's as statements. */
  ddl(engine: SqlEngine): string | string[];
  /** What the store is opened with (nothing: a known schema, recognised). */
  readonly options: Pick<SqlStoreCommonOptions, 'names' | 'mapping'>;
  readonly sessions: { table: string; id: string; title: string; head: string };
  sessionRow(id: string, title: string, createdAt: number): Row;
  readonly nodes: { table: string; id: string };
  /** The node's row at its 1-based position in the session. */
  nodeRow(node: MarkerNode, position: number): Row;
  /** The columns an update of the node's content in place sets. */
  contentSet(node: MarkerNode): Row;
}

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** entity-git's own layout, made by the application: its tables only, no trigger. */
export function ownLayoutShape(label: string, names: SchemaNames, given: boolean): AppShape {
  const S = names.sessions as unknown as Record<string, string | null>;
  const N = names.nodes as unknown as Record<string, string | null>;
  const typeOf = (column: string, engine: SqlEngine) =>
    column === 'created_at'
      ? engine === 'sqlite'
        ? 'real'
        : 'double precision'
      : column === 'seq'
        ? 'integer'
        : 'text';
  const columns = (map: Record<string, string | null>, list: readonly string[], engine: SqlEngine) =>
    list
      .filter((c) => map[c] !== null)
      .map((c) => `${q(map[c]!)} ${typeOf(c, engine)}${c === 'id' ? ' primary key' : ''}`)
      .join(', ');
  const named = (map: Record<string, string | null>, row: Row): Row =>
    Object.fromEntries(
      Object.entries(row)
        .filter(([c]) => map[c] !== null)
        .map(([c, v]) => [map[c]!, v]),
    );
  return {
    label,
    ddl: (engine) => {
      const statements = [
        `create table ${q(names.sessions.table)} (${columns(S, SESSION_COLUMNS, engine)})`,
        `create table ${q(names.nodes.table)} (${columns(N, NODE_COLUMNS, engine)}, unique (${q(names.nodes.session_id)}, ${q(names.nodes.seq)}))`,
      ];
      return engine === 'sqlite' ? statements.join(';\n') : statements;
    },
    options: given ? { names } : {},
    sessions: { table: names.sessions.table, id: names.sessions.id, title: S.title!, head: S.head! },
    sessionRow: (id, title, createdAt) => named(S, { id, title, created_at: createdAt }),
    nodes: { table: names.nodes.table, id: names.nodes.id },
    nodeRow: (n, position) =>
      named(N, {
        id: n.id,
        session_id: n.session_id,
        seq: position,
        role: n.role,
        content: JSON.stringify(n.content),
        predecessor: n.predecessor,
        created_at: n.created_at,
      }),
    contentSet: (n) => named(N, { content: JSON.stringify(n.content) }),
  };
}

/** An application's tables of its own shape, read through a configured mapping. */
export const POSTS_MAPPING: MappingInput = {
  sessions: { table: 'conversations', id: 'conv_id', created_at: 'started', title: 'topic', head: 'leaf' },
  nodes: {
    table: 'posts',
    id: 'post_id',
    session_id: 'conv',
    seq: { column: 'position', from: 0 },
    role: { from: 'author', values: { human: 'user', bot: 'assistant' } },
    content: 'body_json.text',
    predecessor: 'reply_to',
    created_at: 'posted',
    json: ['body_json'],
  },
};

export const postsShape: AppShape = {
  label: 'a configured mapping (other tables, roles, content in JSON, a 0-based seq)',
  ddl: (engine) => {
    const real = engine === 'sqlite' ? 'real' : 'double precision';
    const statements = [
      `create table conversations (conv_id text primary key, topic text, started ${real} not null, leaf text)`,
      `create table posts (post_id text primary key, conv text not null, author text not null, body_json text,
        reply_to text, posted ${real} not null, position integer not null, unique (conv, position))`,
    ];
    return engine === 'sqlite' ? statements.join(';\n') : statements;
  },
  options: { mapping: POSTS_MAPPING },
  sessions: { table: 'conversations', id: 'conv_id', title: 'topic', head: 'leaf' },
  sessionRow: (id, title, createdAt) => ({ conv_id: id, topic: title, started: createdAt, leaf: null }),
  nodes: { table: 'posts', id: 'post_id' },
  nodeRow: (n, position) => ({
    post_id: n.id,
    conv: n.session_id,
    author: n.role === 'user' ? 'human' : 'bot',
    body_json: JSON.stringify({ text: n.content, lang: 'en' }),
    reply_to: n.predecessor,
    posted: n.created_at,
    position: position - 1,
  }),
  contentSet: (n) => ({ body_json: JSON.stringify({ text: n.content, lang: 'en' }) }),
};

export const messagesShape: AppShape = {
  label: 'the "messages" schema (recognised)',
  ddl: (engine) =>
    engine === 'sqlite'
      ? MESSAGES_DDL
      : [
          `create table sessions (id text primary key, agent_id text not null, title text, created_at double precision,
            updated_at double precision, source text, head_id text, model text, extra_meta text)`,
          `create table messages (id text primary key, session_id text references sessions(id) on delete cascade,
            parent_id text, role text, content text, timestamp double precision, source text, extra text,
            input_tokens integer, output_tokens integer)`,
          'create index messages_session on messages(session_id, timestamp)',
        ],
  options: {},
  sessions: { table: 'sessions', id: 'id', title: 'title', head: 'head_id' },
  sessionRow: (id, title, createdAt) => ({
    id,
    agent_id: 'main',
    title,
    created_at: createdAt,
    updated_at: createdAt,
    source: 'cli',
    head_id: null,
    extra_meta: '{}',
  }),
  nodes: { table: 'messages', id: 'id' },
  nodeRow: (n) => ({
    id: n.id,
    session_id: n.session_id,
    parent_id: n.predecessor,
    role: n.role,
    content: n.content,
    timestamp: n.created_at,
    source: n.role === 'user' ? 'cli' : 'agent',
    extra: n.role === 'user' ? null : JSON.stringify({ model: 'acme-large', tool_calls: [] }),
    input_tokens: n.role === 'user' ? null : 100,
    output_tokens: n.role === 'user' ? null : 10,
  }),
  contentSet: (n) => ({ content: n.content }),
};

const flatData = (n: MarkerNode) =>
  JSON.stringify({
    name: n.role === 'user' ? 'user' : 'model-x',
    input: null,
    output: n.content,
    called_by: null,
    reads: [],
    metadata: {},
  });

export const flatDagShape: AppShape = {
  label: 'the "flat-dag" schema (recognised)',
  ddl: (engine) =>
    engine === 'sqlite'
      ? FLAT_DAG_DDL
      : [
          `create table sessions (id text primary key, title text not null default '', created_at double precision,
            updated_at double precision, model text, agent_id text, source text, extra_json text not null default '{}',
            last_node_id text)`,
          `create table nodes (id text primary key, session_id text references sessions(id) on delete cascade,
            type text, predecessor text, caller text, created_at double precision, seq integer, data_json text)`,
          'create index nodes_session_seq on nodes(session_id, seq)',
        ],
  options: {},
  sessions: { table: 'sessions', id: 'id', title: 'title', head: 'last_node_id' },
  sessionRow: (id, title, createdAt) => ({
    id,
    title,
    created_at: createdAt,
    updated_at: createdAt,
    model: 'model-x',
    agent_id: 'main',
    source: 'web',
    extra_json: '{}',
    last_node_id: null,
  }),
  nodes: { table: 'nodes', id: 'id' },
  nodeRow: (n, position) => ({
    id: n.id,
    session_id: n.session_id,
    type: n.role === 'user' ? 'user' : 'llm',
    predecessor: n.predecessor,
    caller: null,
    created_at: n.created_at,
    seq: position - 1,
    data_json: flatData(n),
  }),
  contentSet: (n) => ({ data_json: flatData(n) }),
};
