import type { Role } from '../model/types.js';
import type { Transcript, TranscriptTurn } from './transcript.js';

/** `2026-05-24 07:20:00 UTC` for seconds since the epoch (whole seconds, never before 1970). */
export function utcTime(seconds: number): string {
  const iso = new Date(Math.max(0, Math.floor(seconds)) * 1000).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

export const ROLE_TITLES: Record<Role, string> = {
  user: 'User',
  assistant: 'Assistant',
  tool: 'Tool',
  system: 'System',
};

/** `a, b × 2` for counts by name. */
export const countList = (counts: readonly (readonly [string, number])[]): string =>
  counts.map(([name, c]) => (c > 1 ? `${name} × ${c}` : name)).join(', ');

/** The link of a turn's commit, or null without a template. */
export const commitLink = (t: Transcript, commit: string): string | null =>
  t.commitUrl === null ? null : t.commitUrl.replaceAll('{commit}', commit);

/** The facts of the header, label and value, in order; values plain text. */
export function headerFacts(t: Transcript): [string, string][] {
  const last = t.items.at(-1)?.turn ?? 0;
  const tokens = t.items.reduce<number | null>((sum, x) => (x.tokens === null ? sum : (sum ?? 0) + x.tokens), null);
  const s = t.session;
  const facts: [string, string][] = [
    ['Session', t.sessionId],
    ['Branch', `${t.branch} (turns 1–${last} of ${t.turns})`],
  ];
  if (s?.model) facts.push(['Model', s.model]);
  if (s?.agent_id) facts.push(['Agent', s.agent_id]);
  if (s) facts.push(['Created', utcTime(s.created_at)]);
  if (tokens !== null) facts.push(['Tokens', String(tokens)]);
  facts.push([
    'Redacted',
    !t.redacting ? 'off' : t.redactions.length === 0 ? 'nothing found' : countList(t.redactions),
  ]);
  return facts;
}

/** A turn's time: its latest message's, as its commit's. */
export const turnTime = (turn: TranscriptTurn): number => Math.max(...turn.messages.map((m) => m.node.created_at));

/** The title: the session's, or its id. */
export const titleOf = (t: Transcript): string => t.session?.title || `Session ${t.sessionId}`;

/** The footer's sentence. */
export const footerText = (t: Transcript): string =>
  `Exported by entity-git from the session's repository${t.redacting ? '; secrets redacted' : ', not redacted'}.`;
