import type { Identity } from '@entity-git/git';
import { encodeId } from '../model/names.js';
import { foldLine } from '../model/text.js';

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
