import { commitLink, footerText, headerFacts, ROLE_TITLES, titleOf, turnTime, utcTime } from './render-common.js';
import type { Transcript, TranscriptMessage, TranscriptTurn } from './transcript.js';

/** A fenced block whose fence is longer than any backtick run in `body`. */
function fenced(body: string, info: string): string {
  const longest = Math.max(2, ...[...body.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${info}\n${body}${body.endsWith('\n') ? '' : '\n'}${fence}`;
}

/** Inline code that holds any text (a run of backticks longer than any inside). */
function code(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = '`'.repeat(longest + 1);
  return longest > 0 ? `${ticks} ${text} ${ticks}` : `${ticks}${text}${ticks}`;
}

/** Text for a `<summary>` or a table cell: one line, Markdown's and HTML's specials escaped. */
const inline = (text: string): string =>
  text
    .replace(/\s+/g, ' ')
    .replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!)
    .replace(/([\\`*_[\]|])/g, '\\$1');

const folded = (summary: string, body: string, info: string): string =>
  `<details>\n<summary>${summary}</summary>\n\n${fenced(body, info)}\n\n</details>`;

function message(m: TranscriptMessage): string {
  const n = m.node;
  const facts = [utcTime(n.created_at)];
  if (m.tokens !== null) facts.push(`${m.tokens} tokens`);
  if (n.role === 'tool') {
    const name = m.tool ?? 'tool';
    const body = m.raw ?? m.text;
    return `**Tool result: ${inline(name)}** · ${facts.join(' · ')}\n\n${folded(`${inline(name)} output (${body.split('\n').length} lines)`, body, 'text')}`;
  }
  const parts = [`**${ROLE_TITLES[n.role]}** · ${facts.join(' · ')}`];
  if (m.text !== '') parts.push(m.text);
  for (const c of m.toolCalls)
    parts.push(
      folded(`Tool call: ${inline(c.name)}${c.id === null ? '' : ` (${inline(c.id)})`}`, c.arguments ?? '', 'json'),
    );
  if (m.raw !== null) parts.push(folded('Content as JSON', m.raw, 'json'));
  return parts.join('\n\n');
}

function turn(t: Transcript, x: TranscriptTurn): string {
  const link = commitLink(t, x.commit);
  const commit = link === null ? code(x.commit) : `[${code(x.commit.slice(0, 12))}](${link})`;
  const facts = [utcTime(turnTime(x)), `commit ${commit}`];
  if (x.tokens !== null) facts.push(`${x.tokens} tokens`);
  return [`## Turn ${x.turn}`, facts.join(' · '), ...x.messages.map(message)].join('\n\n');
}

/** A transcript as Markdown (GitHub's dialect: tool calls and results folded in `<details>`). */
export function renderMarkdown(t: Transcript): string {
  const table = ['| | |', '| --- | --- |', ...headerFacts(t).map(([k, v]) => `| ${k} | ${inline(v)} |`)];
  const body = [`# ${inline(titleOf(t))}`, table.join('\n'), ...t.items.map((x) => turn(t, x))];
  return `${body.join('\n\n')}\n\n---\n\n${footerText(t)}\n`;
}
