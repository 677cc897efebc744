import type { Identity } from '@entity-git/git';
import { encodeId } from '@entity-git/core';
import { foldLine } from '@entity-git/core';

/** What git strips from both ends of a name or an email (ident.c `crud`): stripped here too, so every engine writes the same bytes. */
export const CRUD = /^[\x00-\x20.,:;<>"\\']+|[\x00-\x20.,:;<>"\\']+$/g;
export const tidy = (who: Identity): Identity => ({
  name: who.name.replace(CRUD, ''),
  email: who.email.replace(CRUD, ''),
});

export function agentName(model: string, product: string): string {
  const m = foldLine(model, 80).replace(/[<>]/g, '').trim();
  return `agent (${m === '' ? 'unknown model' : m} via ${product})`;
}

/** `[agent <session>] turn <N>: <subject>`, then the trailers that link the session repository. */
export function projectCommitMessage(
  sessionId: string,
  turn: number,
  subject: string,
  sessionCommit: string | null,
): string {
  const id = encodeId(sessionId);
  const lines = [
    subject === '' ? `[agent ${id}] turn ${turn}` : `[agent ${id}] turn ${turn}: ${subject}`,
    '',
    `Session: ${id}`,
    `Turn: ${turn}`,
  ];
  if (sessionCommit !== null) lines.push(`Session-Commit: ${sessionCommit}`);
  return `${lines.join('\n')}\n`;
}

/** What an agent commit's message says about it: the session (as its trailer spells it), the turn, its subject text, the session commit it links. */
export interface AgentCommitFacts {
  /** The session id as the commit writes it (`encodeId`). */
  readonly session: string;
  readonly turn: number;
  /** The user message's subject, as the commit's subject line carries it after `turn <N>: `. */
  readonly subject: string;
  readonly sessionCommit: string | null;
}

const AGENT_SUBJECT = /^\[agent (\S+)\] turn ([1-9]\d*)(?:: (.*))?$/;

/** The trailers of the message's last paragraph, by key (the first value of each). */
function trailerLines(message: string): Map<string, string> {
  const paragraphs = message.replace(/\n+$/, '').split(/\n\n/);
  const out = new Map<string, string>();
  if (paragraphs.length < 2) return out;
  for (const line of paragraphs.at(-1)!.split('\n')) {
    const m = /^([A-Za-z][A-Za-z-]*): (.*)$/.exec(line);
    if (m && !out.has(m[1]!)) out.set(m[1]!, m[2]!);
  }
  return out;
}

/** The name in a commit's raw `committer` line (`name <email> time zone`). */
export const committerName = (line: string): string => line.replace(/ <[^<>]*> -?\d+ [+-]\d{4}$/, '');

/**
 * What `message` says when it is an agent commit entity-git made for a turn ({@link projectCommitMessage}),
 * committed as `agent (… via <product>)`: subject `[agent <session>] turn <N>…` and the `Session:`
 * and `Turn:` trailers agreeing with it. Null for anything else — a user's commit, an undo's revert
 * commit, a commit whose trailers were edited.
 */
export function parseAgentCommit(message: string, committer: string, product: string): AgentCommitFacts | null {
  const name = committerName(committer);
  if (!name.startsWith('agent (') || !name.endsWith(` via ${product})`)) return null;
  const m = AGENT_SUBJECT.exec(message.split('\n', 1)[0]!);
  if (!m) return null;
  const t = trailerLines(message);
  if (t.get('Session') !== m[1] || t.get('Turn') !== m[2] || t.has('Reverts')) return null;
  const sessionCommit = t.get('Session-Commit') ?? null;
  return {
    session: m[1]!,
    turn: Number(m[2]),
    subject: m[3] ?? '',
    sessionCommit: sessionCommit !== null && /^[0-9a-f]{40}$/.test(sessionCommit) ? sessionCommit : null,
  };
}

/**
 * The commit `message` says it takes back: the `Reverts:` trailer of an undo's revert commit, or
 * the line `git revert` writes (`This reverts commit <sha>.`); null for any other message.
 */
export function revertedCommit(message: string): string | null {
  const trailer = trailerLines(message).get('Reverts');
  if (trailer !== undefined && /^[0-9a-f]{40}$/.test(trailer)) return trailer;
  return /^This reverts commit ([0-9a-f]{40})\.?$/m.exec(message)?.[1] ?? null;
}

/**
 * The message of the commit that takes back an agent commit: `[agent <session>] revert turn <N>: <subject>`,
 * then the agent commit's own trailers and `Reverts: <its id>`.
 */
export function revertCommitMessage(agent: AgentCommitFacts, commit: string): string {
  const lines = [
    agent.subject === ''
      ? `[agent ${agent.session}] revert turn ${agent.turn}`
      : `[agent ${agent.session}] revert turn ${agent.turn}: ${agent.subject}`,
    '',
    `Session: ${agent.session}`,
    `Turn: ${agent.turn}`,
  ];
  if (agent.sessionCommit !== null) lines.push(`Session-Commit: ${agent.sessionCommit}`);
  lines.push(`Reverts: ${commit}`);
  return `${lines.join('\n')}\n`;
}

/** The reflog message of an undo that moved the branch back over the agent's commit (found again to say an undo is done). */
export const RESET_REFLOG_PREFIX = 'reset: undo of ';
export const resetReflogMessage = (agentSubject: string): string => `${RESET_REFLOG_PREFIX}${agentSubject}`;
