import type { CheckoutResult, TimelineCommit } from 'ws-server/protocol';
import { h } from './dom.js';
import { plural, sessionHref, short, when } from './format.js';
import { labelOf, type SessionPage, type TimelineState } from './session-page.js';

/** A row's height in px: `.timeline li` in style.css has this height, so row d sits at d × ROW_H. */
export const ROW_H = 24;
/** Lists up to this long are drawn whole; longer ones only the rows in view and OVERSCAN either side. */
const WHOLE_UP_TO = 50;
const OVERSCAN = 20;

function markCurrent(row: HTMLElement, current: boolean): void {
  row.classList.toggle('current', current);
  const link = row.firstElementChild as HTMLElement;
  if (current) link.setAttribute('aria-current', 'step');
  else link.removeAttribute('aria-current');
}

/** A row whose commit is not read yet: as tall as the others, drawn again once its page arrives. */
const pendingRow = (t: TimelineState, d: number) =>
  h('li', { class: 'pending', 'aria-posinset': d + 1, 'aria-setsize': t.n, 'aria-busy': 'true' }, '…');

/** Row d of the list (oldest first), made on first need and kept; null while its commit is not read. */
function rowAt(t: TimelineState, s: SessionPage, d: number): HTMLElement | null {
  let row = t.made.get(d);
  if (row) return row;
  const c: TimelineCommit | undefined = s.history.commits[t.n - 1 - d];
  if (c === undefined) return null;
  row = h(
    'li',
    { 'aria-posinset': d + 1, 'aria-setsize': t.n },
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
  markCurrent(row, d === t.current);
  t.made.set(d, row);
  return row;
}

/** The rows from `top` (px) over `height` (px) in the list, the rest stood in for by two spacers. */
function drawWindow(t: TimelineState, s: SessionPage, top: number, height: number): void {
  const first = t.n <= WHOLE_UP_TO ? 0 : Math.max(0, Math.floor(top / ROW_H) - OVERSCAN);
  const last = t.n <= WHOLE_UP_TO ? t.n : Math.min(t.n, Math.ceil((top + height) / ROW_H) + OVERSCAN);
  if (first === t.first && last === t.last) return;
  t.first = first;
  t.last = last;
  const rows: HTMLElement[] = [];
  let unread = -1;
  for (let d = first; d < last; d++) {
    const row = rowAt(t, s, d);
    if (row === null) unread = Math.max(unread, d);
    rows.push(row ?? pendingRow(t, d));
  }
  t.above.style.height = `${first * ROW_H}px`;
  t.below.style.height = `${(t.n - last) * ROW_H}px`;
  // Rows that stay in the window stay in the page (never taken out and put back: a click under way
  // on one would be lost); those that left it go, the new ones go in at their places.
  const want = [t.above, ...rows, t.below];
  const keep = new Set<Element>(want);
  for (const child of [...t.list.children]) if (!keep.has(child)) child.remove();
  let at: ChildNode | null = t.list.firstChild;
  for (const node of want) {
    if (at === node) at = at.nextSibling;
    else t.list.insertBefore(node, at);
  }
  // Rows d in [first, last) are commits n-1-d: read the pages of those not read yet.
  if (unread >= 0) void s.pages?.ensure(t.n - last, t.n - first).catch(() => undefined);
}

/** Pages arrived: their commits indexed, and the rows drawn where placeholders stood. */
function filled(t: TimelineState, s: SessionPage, from: number, to: number): void {
  if (s.history.commits.length !== t.n) return; // the branch moved: the next render builds a new timeline
  for (let k = from; k < to; k++) {
    const c = s.history.commits[k];
    if (c) t.index.set(c.sha, t.n - 1 - k);
  }
  if (!t.list.isConnected) return;
  // Only the placeholders drawn are swapped for their rows: the rows already in the list stay as
  // they are, so a click under way on one is never lost to a redraw (a row taken out of the page
  // between the press and the release gets no click).
  for (const pending of [...t.list.querySelectorAll<HTMLElement>(':scope > li.pending')]) {
    const row = rowAt(t, s, Number(pending.getAttribute('aria-posinset')) - 1);
    if (row) pending.replaceWith(row);
  }
}

/** An empty row standing in for the rows not drawn (a spacer, not a padding: a flex item shrinks its content, never its padding). */
const spacer = () => h('li', { class: 'spacer', 'aria-hidden': 'true', role: 'presentation' });

/**
 * The timeline panel. One row per commit, but a long session's 2,000 are not all in the page: the
 * list is as tall as every row and draws only the rows in view (and a few either side) as it
 * scrolls. Built once per history and reused while the history is the same: a step moves the mark
 * and, once the page is laid out, {@link placeTimeline} scrolls the list to the current entry.
 */
export function renderTimeline(s: SessionPage, v: CheckoutResult | null, branch: string | null): HTMLElement {
  const label = branch === null ? '—' : labelOf(s, branch);
  const n = s.history.commits.length;
  const key = `${s.history.branch}|${n}|${s.history.commits[0]?.sha ?? ''}|${label}`;
  if (s.timeline?.key !== key) {
    const list = h('ol', { 'data-testid': 'timeline' });
    const el = h(
      'nav',
      { class: 'timeline', 'aria-label': 'Timeline' },
      h('h3', { 'data-testid': 'timeline-heading' }, `Timeline · ${label} · ${plural(n, 'commit')}`),
      list,
    );
    const index = new Map<string, number>();
    s.history.commits.forEach((c, i) => {
      if (c) index.set(c.sha, n - 1 - i);
    });
    const [above, below] = [spacer(), spacer()];
    const t: TimelineState = {
      key,
      el,
      list,
      above,
      below,
      n,
      index,
      made: new Map(),
      first: 0,
      last: 0,
      current: -1,
      shown: -1,
      top: 0,
    };
    // As tall as every row from the start, so the panel has its height before any row is drawn.
    below.style.height = `${n * ROW_H}px`;
    list.append(above, below);
    let queued = false;
    list.addEventListener('scroll', () => {
      // Kept at once, not in the frame: a render before that frame puts the list back at t.top.
      if (list.isConnected) t.top = list.scrollTop;
      if (queued) return;
      queued = true;
      requestAnimationFrame(() => {
        queued = false;
        // Detached (a re-render took it out): its scrollTop reads 0, the next placeTimeline sets it.
        if (!list.isConnected) return;
        drawWindow(t, s, t.top, list.clientHeight);
      });
    });
    s.timeline = t;
    if (s.pages) s.pages.onFill = (from, to) => filled(t, s, from, to);
  }
  const t = s.timeline;
  // Read before the render takes the list out of the page (which resets it): a scroll whose
  // event has not fired yet is kept too.
  if (t.list.isConnected) t.top = t.list.scrollTop;
  const current = v ? (t.index.get(v.commit) ?? -1) : -1;
  if (current !== t.current) {
    const was = t.made.get(t.current);
    if (was) markCurrent(was, false);
    t.current = current;
    const row = t.made.get(current);
    if (row) markCurrent(row, true);
  }
  return t.el;
}

/**
 * After the page is laid out, given the list's visible height (read with the page's other
 * layout reads): the list scrolled back to where it was, or, when the current entry changed (a
 * step, a jump) and is out of view, to it; and the rows there drawn. A render that leaves the
 * current entry as it was (a fold, the usage figures arriving) leaves a list the user scrolled
 * away where they left it. Writes only.
 */
export function placeTimeline(s: SessionPage, height: number): void {
  const t = s.timeline;
  if (!t?.list.isConnected) return;
  let top = t.top;
  if (t.current >= 0 && t.current !== t.shown) {
    const y = t.current * ROW_H;
    if (y < top || y + ROW_H > top + height) top = Math.max(0, Math.min(y - height / 2, t.n * ROW_H - height));
  }
  t.shown = t.current;
  t.top = top;
  drawWindow(t, s, top, height);
  t.list.scrollTop = top;
}
