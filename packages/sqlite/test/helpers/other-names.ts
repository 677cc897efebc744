import type { SchemaNamesInput } from '../../src/index.js';

/** Names unlike the defaults in every table and column, to run the whole contract through a mapping. */
export const OTHER_NAMES: SchemaNamesInput = {
  projects: {
    table: 'eg projects',
    id: 'pid',
    name: 'label',
    workdir: 'dir',
    status: 'state',
    description: 'about',
    created_at: 'born',
  },
  sessions: {
    table: 'chat_threads',
    id: 'thread_id',
    title: 'subject',
    agent_id: 'agent',
    model: 'llm',
    project_id: 'workspace',
    head: 'current_leaf',
    created_at: 'started_at',
    metadata: 'extra',
  },
  nodes: {
    table: 'chat_messages',
    id: 'msg_id',
    session_id: 'thread',
    seq: 'n',
    role: 'author_role',
    content: 'body',
    predecessor: 'parent',
    caller: 'tool_parent',
    created_at: 'ts',
    metadata: 'meta',
  },
};
