import type { DagNode, JsonValue, Session } from '@entity-git/core';
import { FAKE_SECRETS as S } from './fake-secrets.js';
import type { NodeSink } from './golden-dag.js';

/**
 * A session with a fake secret of every preset shape (fake-secrets.ts): in prompts (so in commit
 * subjects), in tool output, in node and session metadata, in a tool call's arguments, and next
 * to characters a JSON string escapes (quotes, tabs, newlines, a private key's line breaks); with
 * parallel tool results and a retried reply, so it has a second branch. Ids and times fixed.
 */
export const SECRET_SESSION: Session = Object.freeze({
  id: 'secrets-1',
  title: `Deploy with ${S.github}`,
  agent_id: 'agent-1',
  model: 'claude-sonnet-4.7',
  project_id: null,
  head: 'a3r',
  created_at: 1779600000,
  metadata: { note: `backup key ${S.sendgrid}` },
}) as Session;

type Spec = [
  id: string,
  role: DagNode['role'],
  predecessor: string | null,
  caller: string | null,
  content: JsonValue,
  metadata?: JsonValue,
];

const SPECS: Spec[] = [
  ['s1', 'system', null, null, 'You are a deployment agent.'],
  ['u1', 'user', 's1', null, `Deploy using ${S.github} and key ${S.aws} please`],
  [
    'a1',
    'assistant',
    'u1',
    null,
    {
      text: 'Reading the config and the key.',
      tool_calls: [
        { id: 'fc_1', name: 'read', arguments: { path: 'deploy.env' } },
        {
          id: 'fc_2',
          name: 'shell',
          arguments: { command: `psql "${S['database-connection-string']}" -c 'select 1'` },
        },
      ],
    },
    { tokens: 120 },
  ],
  [
    't1',
    'tool',
    'a1',
    'a1',
    `KEY_FILE:\n${S.privatekey}\n\tNPM="${S.npm}"\n`,
    { tool: 'read', env: { NPM_TOKEN: S.npm } },
  ],
  ['t2', 'tool', 'a1', 'a1', ' ?column? \n----------\n        1\n(1 row)', { tool: 'shell' }],
  ['a2', 'assistant', 't2', null, 'The database answers. Pushing now.', { usage: { total_tokens: 300 } }],
  ['u2', 'user', 'a2', null, [{ type: 'text', text: `Use "${S.slack}"\tfor Slack and\n${S.basicauth} for git` }]],
  ['a3', 'assistant', 'u2', null, `Configured. The OpenAI key ${S.openai} is set too.`, { tokens: 50 }],
  ['a3r', 'assistant', 'u2', null, `Configured; Anthropic key ${S.anthropic}, GitLab ${S.gitlab}.`, { tokens: 55 }],
];

/** The nodes in seq order; created_at steps 2.5 s from the session's creation. */
export function secretNodes(sessionId = SECRET_SESSION.id): DagNode[] {
  return SPECS.map(([id, role, predecessor, caller, content, metadata], i) => ({
    id,
    session_id: sessionId,
    seq: i + 1,
    role,
    content,
    predecessor,
    caller,
    created_at: SECRET_SESSION.created_at + 2.5 * (i + 1),
    metadata: metadata ?? null,
  }));
}

/** Write the session into `sink`. */
export async function writeSecretSession(sink: NodeSink, options: { sessionId?: string } = {}): Promise<void> {
  const id = options.sessionId ?? SECRET_SESSION.id;
  await sink.createSession({ ...SECRET_SESSION, id, head: null });
  for (const n of secretNodes(id)) await sink.addNode(n);
  await sink.setHead(id, SECRET_SESSION.head);
}

/**
 * The branch tips of the secret session mirrored with the default redaction (secretlint's
 * recommended preset), the default identity and the flat layout: equal on node-fs, on a memory
 * storage and in Chromium.
 */
export const REDACTED_TIPS: Readonly<Record<string, string>> = Object.freeze({
  main: 'cdcccc2e7613a4f6814625d0444ff78ec6048440',
  'retry-a3r': '08d62c6efd41156346ff99a451cbb364dc06948f',
});
