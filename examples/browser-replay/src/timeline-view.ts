import type { CheckoutResult, TimelineCommit } from 'ws-server/protocol';
import { h } from './dom.js';
import { plural, sessionHref, short, when } from './format.js';
import { labelOf, type SessionPage } from './session-page.js';

function markCurrent(row: HTMLElement, current: boolean): void {
  row.classList.toggle('current', current);
  const link = row.firstElementChild as HTMLElement;
  if (current) link.setAttribute('aria-current', 'step');
  else link.removeAttribute('aria-current');
}

/**
 * The timeline panel. One row per commit (2,000 in a long session): built once per history and
 * reused while the history is the same, so a step moves the mark between two rows instead of
 * drawing every row again.
 */
export function renderTimeline(s: SessionPage, v: CheckoutResult | null, branch: string | null): HTMLElement {
  const label = branch === null ? '—' : labelOf(s, branch);
  const key = `${s.history.branch}|${s.history.commits.length}|${s.history.commits[0]?.sha ?? ''}|${label}`;
  if (s.timeline?.key !== key) {
    const rows = new Map<string, HTMLElement>();
    const list = h(
      'ol',
      { 'data-testid': 'timeline' },
      [...s.history.commits].reverse().map((c: TimelineCommit) => {
        const row = h(
          'li',
          {},
          h(
            'a',
            {
              href: sessionHref(s.id, c.sha, s.history.branch ?? undefined),
              'data-testid': 'commit',
              'data-sha': c.sha,
            },
            h('span', { class: 'sha' }, short(c.sha)),
            ' ',
            h('span', { class: 'subject' }, c.subject),
            ' ',
            h('time', {}, when(c.time)),
          ),
        );
        rows.set(c.sha, row);
        return row;
      }),
    );
    const el = h(
      'nav',
      { class: 'timeline', 'aria-label': 'Timeline' },
      h('h3', {}, `Timeline · ${label} · ${plural(s.history.commits.length, 'commit')}`),
      list,
    );
    s.timeline = { key, el, rows };
  }
  const t = s.timeline;
  for (const row of t.el.querySelectorAll<HTMLElement>('li.current')) markCurrent(row, false);
  const row = v ? t.rows.get(v.commit) : undefined;
  if (row) markCurrent(row, true);
  return t.el;
}
