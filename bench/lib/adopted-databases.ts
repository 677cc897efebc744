// The adopted-sessions bench's databases: the same sessions in entity-git's own schema, in its
// layout made by the application's own SQL (no trigger, no markers table), and, on request, in the
// "flat-dag" schema and as an OpenAI Agents SDK SQLiteSession.
import { join } from 'node:path';
import { openSqlite } from '../../packages/sqlite/src/index.js';
import { FLAT_DAG_DDL } from '../../packages/sqlite/test/app-databases/fixtures/flat-dag-db.js';
import { AGENTS_DDL } from '../../packages/sqlite/test/app-databases/fixtures/recognised-stores.js';
import { tablesHash } from '../../packages/sqlite/test/app-databases/fixtures/table-hash.js';
import { Database } from './app-sqlite.js';
import { BASE_TIME } from './conversation.js';
import { fillSessions, sessionId, sessionNodes } from './small-sessions.js';

/** entity-git's layout as an application creates it with its own SQL: the tables and indexes, no trigger. */
const OWN_LAYOUT_DDL = `
create table sessions (id text primary key, title text, agent_id text, model text, project_id text, head text,
  created_at real not null, metadata text);
create table nodes (id text primary key, session_id text not null references sessions(id), seq integer not null,
  role text not null, content text, predecessor text, caller text, created_at real not null, metadata text,
  unique (session_id, seq));
create index nodes_caller on nodes(caller);
create index nodes_predecessor on nodes(predecessor);
`;

export interface Db {
  label: string;
  file: string;
  root: string;
  /** The tables' hash once written (null: entity-git's own, which its triggers write). */
  hash: string | null;
}

/** The same sessions as rows of the "flat-dag" schema: user and llm nodes, a 0-based seq, data_json. */
function fillFlatDag(file: string, sessions: number, turns: number): void {
  const raw = new Database(file);
  raw.pragma('journal_mode = WAL');
  raw.exec(FLAT_DAG_DDL);
  const session = raw.prepare(
    `insert into sessions (id, title, created_at, updated_at, model, agent_id, source, extra_json, last_node_id)
     values (?, ?, ?, ?, 'model-x', 'main', 'web', '{}', null)`,
  );
  const node = raw.prepare(
    'insert into nodes (id, session_id, type, predecessor, caller, created_at, seq, data_json) values (?, ?, ?, ?, null, ?, ?, ?)',
  );
  raw.transaction(() => {
    for (let i = 0; i < sessions; i++) {
      session.run(sessionId(i), `Session ${i}`, BASE_TIME + i, BASE_TIME + i);
      for (const n of sessionNodes(i, turns)) {
        const data = {
          name: n.role === 'user' ? 'user' : 'model-x',
          input: null,
          output: n.content,
          reads: [],
          metadata: {},
        };
        node.run(
          n.id,
          n.session_id,
          n.role === 'user' ? 'user' : 'llm',
          n.predecessor,
          n.created_at,
          n.seq - 1,
          JSON.stringify(data),
        );
      }
    }
  })();
  raw.close();
}

/**
 * The same sessions as an OpenAI Agents SDK SQLiteSession (recognised, read through the query form
 * of a mapping): one Responses item a row, times as CURRENT_TIMESTAMP text.
 */
function fillAgentsSdk(file: string, sessions: number, turns: number): void {
  const raw = new Database(file);
  raw.pragma('journal_mode = WAL');
  for (const ddl of AGENTS_DDL) raw.exec(ddl);
  const text = (t: number) => new Date(t * 1000).toISOString().replace('T', ' ').slice(0, 19);
  const session = raw.prepare('insert into agent_sessions (session_id, created_at, updated_at) values (?, ?, ?)');
  const item = raw.prepare('insert into agent_messages (session_id, message_data, created_at) values (?, ?, ?)');
  raw.transaction(() => {
    for (let i = 0; i < sessions; i++) {
      session.run(sessionId(i), text(BASE_TIME + i), text(BASE_TIME + i));
      for (const n of sessionNodes(i, turns)) {
        const data =
          n.role === 'user'
            ? { role: 'user', content: n.content }
            : {
                type: 'message',
                role: 'assistant',
                status: 'completed',
                content: [{ type: 'output_text', text: n.content, annotations: [] }],
              };
        item.run(n.session_id, JSON.stringify(data), text(n.created_at));
      }
    }
  })();
  raw.close();
}

/**
 * The databases, each holding `sessions` sessions of `turns` turns: entity-git's own schema, its
 * layout made by the application's DDL, and with `--flat-dag` and `--query` the two others.
 */
export async function databases(dir: string, sessions: number, turns: number): Promise<Db[]> {
  const at = (name: string, label: string): Db => ({
    label,
    file: join(dir, `${name}.db`),
    root: join(dir, name),
    hash: null,
  });
  // An application's tables, hashed once written: a run that wrote into them is caught.
  const adopted = async (db: Db, fill: (file: string) => void | Promise<void>): Promise<Db> => {
    await fill(db.file);
    return { ...db, hash: tablesHash(db.file) };
  };
  const own = at('own', 'own schema (triggers)');
  const ownStore = await openSqlite({ file: own.file });
  await fillSessions(ownStore.db, sessions, turns);
  await ownStore.close();
  const dbs = [
    own,
    await adopted(at('adopted', "adopted (the application's DDL)"), (file) => fillOwnLayout(file, sessions, turns)),
  ];
  if (process.argv.includes('--flat-dag'))
    dbs.push(await adopted(at('flat', 'adopted "flat-dag"'), (file) => fillFlatDag(file, sessions, turns)));
  if (process.argv.includes('--query'))
    dbs.push(await adopted(at('agents', 'query-mapped (Agents SDK)'), (file) => fillAgentsSdk(file, sessions, turns)));
  return dbs;
}

/** entity-git's layout made by the application's own SQL, then filled through a store that migrates nothing. */
async function fillOwnLayout(file: string, sessions: number, turns: number): Promise<void> {
  const app = new Database(file);
  app.pragma('journal_mode = WAL');
  app.exec(OWN_LAYOUT_DDL);
  app.close();
  const store = await openSqlite({ file, migrate: false });
  await fillSessions(store.db, sessions, turns);
  await store.close();
}
