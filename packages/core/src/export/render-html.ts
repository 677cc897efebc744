import { commitLink, footerText, headerFacts, ROLE_TITLES, titleOf, turnTime, utcTime } from './render-common.js';
import type { Transcript, TranscriptMessage, TranscriptTurn } from './transcript.js';

const esc = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

// One self-contained page: styles inline, no script, no font, image or link to fetch, so it
// opens anywhere without a request (and a Content-Security-Policy that says so).
const STYLE = `
:root{color-scheme:light dark;--fg:#1f2328;--bg:#fff;--muted:#656d76;--line:#d0d7de;--user:#ddf4ff;--assistant:#f6f8fa;--tool:#fff8c5;--system:#fbefff}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#8d96a0;--line:#30363d;--user:#0c2d6b;--assistant:#161b22;--tool:#3b2e00;--system:#2a1040}}
body{font:15px/1.5 system-ui,sans-serif;color:var(--fg);background:var(--bg);max-width:52rem;margin:2rem auto;padding:0 1rem}
h1{font-size:1.6rem;margin:0 0 1rem}h2{font-size:1.15rem;margin:2rem 0 .25rem;border-bottom:1px solid var(--line)}
table{border-collapse:collapse;margin-bottom:1rem}td,th{text-align:left;padding:.15rem .75rem .15rem 0;vertical-align:top}th{color:var(--muted);font-weight:500}
.turn-facts,.facts{color:var(--muted);font-size:.85rem}
.msg{border:1px solid var(--line);border-radius:6px;padding:.5rem .75rem;margin:.5rem 0}
.user{background:var(--user)}.assistant{background:var(--assistant)}.tool{background:var(--tool)}.system{background:var(--system)}
.role{font-weight:600;margin-right:.5rem}.text{white-space:pre-wrap;overflow-wrap:anywhere;margin:.25rem 0}
pre{white-space:pre-wrap;overflow-wrap:anywhere;font:13px/1.4 ui-monospace,monospace;margin:.25rem 0}
summary{cursor:pointer;font-size:.9rem}code{font:13px ui-monospace,monospace}a{color:inherit}
footer{color:var(--muted);font-size:.8rem;margin:2rem 0}
`;

const folded = (summary: string, body: string): string =>
  `<details><summary>${esc(summary)}</summary><pre>${esc(body)}</pre></details>`;

function message(m: TranscriptMessage): string {
  const n = m.node;
  const facts = [utcTime(n.created_at)];
  if (m.tokens !== null) facts.push(`${m.tokens} tokens`);
  const head = `<div><span class="role">${n.role === 'tool' ? `Tool result: ${esc(m.tool ?? 'tool')}` : ROLE_TITLES[n.role]}</span><span class="facts">${esc(facts.join(' · '))}</span></div>`;
  const parts = [head];
  if (n.role === 'tool') {
    const body = m.raw ?? m.text;
    parts.push(folded(`${m.tool ?? 'tool'} output (${body.split('\n').length} lines)`, body));
  } else {
    if (m.text !== '') parts.push(`<div class="text">${esc(m.text)}</div>`);
    for (const c of m.toolCalls)
      parts.push(folded(`Tool call: ${c.name}${c.id === null ? '' : ` (${c.id})`}`, c.arguments ?? ''));
    if (m.raw !== null) parts.push(folded('Content as JSON', m.raw));
  }
  return `<div class="msg ${n.role}" id="node-${esc(n.id)}">${parts.join('')}</div>`;
}

function turn(t: Transcript, x: TranscriptTurn): string {
  const link = commitLink(t, x.commit);
  const commit =
    link === null ? `<code>${esc(x.commit)}</code>` : `<a href="${esc(link)}"><code>${esc(x.commit)}</code></a>`;
  const facts = [esc(utcTime(turnTime(x))), `commit ${commit}`];
  if (x.tokens !== null) facts.push(`${x.tokens} tokens`);
  return `<section id="turn-${x.turn}"><h2>Turn ${x.turn}</h2><div class="turn-facts">${facts.join(' · ')}</div>\n${x.messages.map(message).join('\n')}</section>`;
}

/** A transcript as one HTML page with everything inline (styles; no script, no external resource). */
export function renderHtml(t: Transcript): string {
  const facts = headerFacts(t)
    .map(([k, v]) => `<tr><th>${esc(k)}</th><td>${esc(v)}</td></tr>`)
    .join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(titleOf(t))}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${esc(titleOf(t))}</h1>
<table>${facts}</table>
${t.items.map((x) => turn(t, x)).join('\n')}
<footer>${esc(footerText(t))}</footer>
</body>
</html>
`;
}
