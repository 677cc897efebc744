// "Save for offline" on screen: progress, then (the copy saved) the check running, then every
// branch's commit id on the server beside the one rebuilt in this browser, and whether they are equal.
import { h } from './dom.js';
import { plural, short } from './format.js';
import type { SaveReport } from './offline.js';

export type SaveState =
  | { sessionId: string; status: 'running'; nodes: number }
  /** Saved (replayable offline); the rows may still be going in, the commit ids are being rebuilt in this browser to compare. */
  | { sessionId: string; status: 'checking'; nodes: number; branches: number; copied: boolean }
  | { sessionId: string; status: 'done'; report: SaveReport }
  | { sessionId: string; status: 'failed'; message: string };

export function renderSave(s: SaveState): HTMLElement {
  if (s.status === 'running')
    return h(
      'div',
      { class: 'save running', 'data-testid': 'save-report', 'data-phase': 'running', role: 'status' },
      s.nodes > 0 ? `Saving… ${plural(s.nodes, 'node')} copied` : 'Saving… copying the session',
    );
  if (s.status === 'checking')
    return h(
      'div',
      { class: 'save running', 'data-testid': 'save-report', 'data-phase': 'checking', role: 'status' },
      h(
        'p',
        { 'data-testid': 'save-summary' },
        s.copied
          ? `Copied for offline: the server’s repository, ${plural(s.branches, 'branch')} — replay works offline now. ${plural(s.nodes, 'node')} copied so far; rebuilding the commit ids in this browser to compare them with the server’s…`
          : `Copied for offline: ${plural(s.nodes, 'node')}, ${plural(s.branches, 'branch')} — rebuilding the commit ids in this browser to compare them with the server’s…`,
      ),
    );
  if (s.status === 'failed')
    return h(
      'div',
      { class: 'save failed', 'data-testid': 'save-report', 'data-phase': 'failed', role: 'alert' },
      `Save for offline failed: ${s.message}`,
    );
  const r = s.report;
  return h(
    'div',
    {
      class: `save ${r.equal ? 'equal' : 'differs'}`,
      'data-testid': 'save-report',
      'data-phase': 'done',
      role: 'status',
    },
    h(
      'p',
      { 'data-testid': 'save-summary' },
      r.equal
        ? `Saved for offline: ${plural(r.nodes, 'node')}, ${plural(r.branches.length, 'branch')} — the commit ids rebuilt in this browser equal the server's ✓`
        : `Saved for offline: ${plural(r.nodes, 'node')} — the commit ids rebuilt in this browser differ from the server's ✗`,
    ),
    r.metaChanged
      ? h(
          'p',
          { class: 'hint' },
          'The session row changed after those commits (title, model or project): the server keeps its commits as they were made, a rebuild from today’s rows commits today’s meta.json.',
        )
      : null,
    h(
      'div',
      { class: 'table-scroll' },
      h(
        'table',
        { 'data-testid': 'save-table' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', {}, 'branch'),
            h('th', {}, 'server'),
            h('th', {}, 'browser'),
            h('th', {}, h('span', { class: 'sr-only' }, 'equal')),
          ),
        ),
        h(
          'tbody',
          {},
          r.branches.map((b) =>
            h(
              'tr',
              {
                'data-testid': 'save-row',
                'data-branch': b.name,
                'data-server': b.server ?? '',
                'data-browser': b.browser ?? '',
              },
              h('td', {}, b.name),
              h('td', { class: 'sha' }, short(b.server)),
              h('td', { class: 'sha' }, short(b.browser)),
              h('td', {}, b.equal ? '✓ equal' : '✗ differs'),
            ),
          ),
        ),
      ),
    ),
  );
}
