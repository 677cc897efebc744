// Databases laid out by an application rather than by entity-git's migrations, as plain SQL text,
// so a test can create them with any client (better-sqlite3, pg, Python's sqlite3) and no kysely.

export type ShapeEngine = 'sqlite' | 'postgres';

/** One message of the shapes' conversation; `content` is plain text in every shape. */
export interface ShapeMessage {
  id: string;
  seq: number;
  role: 'user' | 'assistant' | 'tool' | 'system';
  content: string;
  predecessor: string | null;
  created_at: number;
}

export const SHAPE_SESSION = { id: 'shape-1', title: 'Shapes of a database', created_at: 1_700_000_000.25 } as const;

/** Three turns with a retried answer (a fork), so a mirror makes two branches. */
export const SHAPE_MESSAGES: readonly ShapeMessage[] = [
  {
    id: 'u1',
    seq: 1,
    role: 'user',
    content: 'Hello, can you plan a trip?',
    predecessor: null,
    created_at: 1_700_000_001,
  },
  {
    id: 'a1',
    seq: 2,
    role: 'assistant',
    content: 'Where to? Lisbon is lovely in May.',
    predecessor: 'u1',
    created_at: 1_700_000_002.5,
  },
  {
    id: 'u2',
    seq: 3,
    role: 'user',
    content: 'Lisbon it is — "quotes", \\backslashes\\ and ünïcödé 🌍',
    predecessor: 'a1',
    created_at: 1_700_000_003,
  },
  { id: 'a2', seq: 4, role: 'assistant', content: 'Day 1: Alfama.', predecessor: 'u2', created_at: 1_700_000_004 },
  {
    id: 'a2r',
    seq: 5,
    role: 'assistant',
    content: 'Day 1: Belém, then Alfama.',
    predecessor: 'u2',
    created_at: 1_700_000_005,
  },
  { id: 'u3', seq: 6, role: 'user', content: 'Thanks!', predecessor: 'a2r', created_at: 1_700_000_006 },
];

const q = (s: string | null): string => (s === null ? 'null' : `'${s.replace(/'/g, "''")}'`);
const seconds = (engine: ShapeEngine) => (engine === 'postgres' ? 'double precision' : 'real');

/**
 * entity-git's own schema (packages/sqlite/README.md, 'Schema and migrations'), as the application
 * itself would create it; content is JSON text.
 */
export function documentedShapeSql(engine: ShapeEngine, messages: readonly ShapeMessage[] = SHAPE_MESSAGES): string[] {
  const r = seconds(engine);
  return [
    `create table projects (id text primary key, name text not null, workdir text not null, status text not null, description text, created_at ${r} not null)`,
    `create table sessions (id text primary key, title text, agent_id text, model text, project_id text references projects(id), head text, created_at ${r} not null, metadata text)`,
    `create table nodes (id text primary key, session_id text not null references sessions(id), seq integer not null, role text not null, content text,
       predecessor text, caller text, created_at ${r} not null, metadata text, unique (session_id, seq))`,
    `insert into sessions (id, title, created_at) values (${q(SHAPE_SESSION.id)}, ${q(SHAPE_SESSION.title)}, ${SHAPE_SESSION.created_at})`,
    ...messages.map((m) => documentedInsert(m)),
  ];
}

export function documentedInsert(m: ShapeMessage, session: string = SHAPE_SESSION.id): string {
  return `insert into nodes (id, session_id, seq, role, content, predecessor, created_at) values (${q(m.id)}, ${q(session)}, ${m.seq}, ${q(m.role)}, ${q(JSON.stringify(m.content))}, ${q(m.predecessor)}, ${m.created_at})`;
}

/**
 * The original design's own naming: `conversations` and `messages`, the edge in `parent_id`,
 * `content` as plain text, and no projects table, caller or metadata columns.
 */
export function renamedShapeSql(engine: ShapeEngine, messages: readonly ShapeMessage[] = SHAPE_MESSAGES): string[] {
  const r = seconds(engine);
  return [
    `create table conversations (id text primary key, title text, created_at ${r} not null)`,
    `create table messages (id text primary key, conversation_id text not null references conversations(id), seq integer not null, role text not null,
       content text, parent_id text, created_at ${r} not null, unique (conversation_id, seq))`,
    `insert into conversations (id, title, created_at) values (${q(SHAPE_SESSION.id)}, ${q(SHAPE_SESSION.title)}, ${SHAPE_SESSION.created_at})`,
    ...messages.map((m) => renamedInsert(m)),
  ];
}

export function renamedInsert(m: ShapeMessage, session: string = SHAPE_SESSION.id): string {
  return `insert into messages (id, conversation_id, seq, role, content, parent_id, created_at) values (${q(m.id)}, ${q(session)}, ${m.seq}, ${q(m.role)}, ${q(m.content)}, ${q(m.predecessor)}, ${m.created_at})`;
}

/** The configuration (`--config` file / store options) that maps {@link renamedShapeSql}. */
export const RENAMED_SHAPE_CONFIG = {
  names: {
    sessions: { table: 'conversations' },
    nodes: { table: 'messages', session_id: 'conversation_id', predecessor: 'parent_id' },
  },
  formats: { nodes: { content: 'text' } },
} as const;

/** A table the contract cannot read: `seq` is text. */
export function incompatibleShapeSql(engine: ShapeEngine): string[] {
  return [
    `create table sessions (id text primary key, title text, created_at ${seconds(engine)} not null)`,
    `create table nodes (id text primary key, session_id text not null, seq text not null, role text not null, content text, predecessor text, created_at ${seconds(engine)} not null)`,
    `insert into sessions (id, title, created_at) values ('s', 't', 1)`,
  ];
}
