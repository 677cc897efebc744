// In the turn on screen: the "files changed" panel — the paths the turn changed in the project
// (from its shadow snapshots, `list_turn_files`), their added and removed lines and who changed
// each — one file's unified diff opened under its row (`turn_file_diff`), and the restore of the
// turn's files with its outcome (restore-view.ts).
import type { TurnFile, TurnFilesListResult } from '@entity-git/core';
import { h } from './dom.js';
import { plural, short } from './format.js';
import { renderRestore } from './restore-view.js';
import type { SessionViewInput } from './session-page.js';

/** The files of the turn on screen, as read for its session commit. */
export interface TurnFilesState {
  sessionId: string;
  /** The session commit of the turn they were read for. */
  commit: string;
  turn: number;
  /** `ready`: listed; `none`: no snapshots of this turn; `failed`: the read failed. */
  status: 'ready' | 'none' | 'failed';
  list: TurnFilesListResult | null;
  /** For `none` and `failed`: the sentence, and the code with the library's message. */
  text?: string;
  detail?: string;
  /** The file whose diff is open; `diff` null while it is read. */
  open: { path: string; diff: string | null; error?: string } | null;
}

/** Diff lines drawn at most; a longer diff says how many more there are. */
const MAX_DIFF_LINES = 2000;

const STATUS_WORD: Record<TurnFile['status'], string> = {
  added: 'added',
  modified: 'modified',
  deleted: 'deleted',
  'type-changed': 'type changed',
};

/**
 * The snapshots kept for turn N were taken for another branch's turn N (a fork re-used the
 * number): they describe that turn, not the one on screen, so nothing is offered for them.
 */
const otherBranch = (t: TurnFilesState) => t.list?.session_commit != null && t.list.session_commit !== t.commit;

function lineKind(line: string, inHunk: boolean): string {
  if (line.startsWith('@@')) return 'hunk';
  if (!inHunk) return 'meta';
  if (line.startsWith('+')) return 'add';
  if (line.startsWith('-')) return 'del';
  if (line.startsWith('\\')) return 'meta';
  return 'ctx';
}

/** A unified diff drawn line by line: the `+` and `-` of git's text kept (the marks are not only colour). */
function renderDiff(path: string, diff: string): HTMLElement {
  const lines = diff.endsWith('\n') ? diff.slice(0, -1).split('\n') : diff.split('\n');
  let inHunk = false;
  const rows = lines.slice(0, MAX_DIFF_LINES).map((line) => {
    if (line.startsWith('@@')) inHunk = true;
    else if (line.startsWith('diff --git')) inHunk = false;
    const kind = lineKind(line, inHunk);
    return h('span', { class: `diff-line ${kind}`, 'data-testid': 'diff-line', 'data-kind': kind }, line);
  });
  const more = lines.length - rows.length;
  return h(
    'div',
    {
      class: 'diff',
      role: 'region',
      'aria-label': `Diff of ${path}`,
      tabindex: '0',
      'data-testid': 'turn-file-diff',
      'data-path': path,
    },
    diff === '' ? h('p', { class: 'hint' }, 'The turn did not change this file.') : h('pre', {}, h('code', {}, rows)),
    more > 0 ? h('p', { class: 'hint' }, `… ${plural(more, 'more line')} not drawn.`) : null,
  );
}

function renderFile(t: TurnFilesState, f: TurnFile, i: number, openDiff: (path: string) => void): HTMLElement {
  const open = t.open?.path === f.path ? t.open : null;
  // By place in the list: a path is no id. The button's id keeps the focus on it across a re-render.
  const diffId = `turn-file-diff-${i}`;
  const binary = f.added === null || f.removed === null;
  return h(
    'li',
    {
      class: 'turn-file',
      'data-testid': 'turn-file',
      'data-path': f.path,
      'data-status': f.status,
      'data-added': binary ? 'binary' : f.added,
      'data-removed': binary ? 'binary' : f.removed,
      'data-by': f.by,
    },
    h(
      'div',
      { class: 'turn-file-row' },
      h(
        'button',
        {
          type: 'button',
          id: `turn-file-open-${i}`,
          class: 'link turn-file-open',
          'data-testid': 'turn-file-open',
          'aria-expanded': String(open !== null),
          'aria-controls': open ? diffId : null,
          onclick: () => openDiff(f.path),
        },
        h('span', { 'aria-hidden': 'true' }, open ? '▾ ' : '▸ '),
        h('span', { class: 'path' }, f.path),
        h('span', { class: 'sr-only' }, open ? ', hide its diff' : ', show its diff'),
      ),
      h('span', { class: `file-status ${f.status}` }, STATUS_WORD[f.status]),
      binary
        ? h('span', { class: 'lines', 'data-testid': 'turn-file-lines' }, 'binary')
        : h(
            'span',
            { class: 'lines', 'data-testid': 'turn-file-lines' },
            h(
              'span',
              { 'aria-hidden': 'true', 'data-testid': 'turn-file-figures' },
              h('span', { class: 'add' }, `+${f.added}`),
              ' ',
              h('span', { class: 'del' }, `−${f.removed}`),
            ),
            h('span', { class: 'sr-only' }, `${plural(f.added!, 'line')} added, ${f.removed} removed`),
          ),
      h(
        'span',
        { class: `by by-${f.by}`, 'data-testid': 'turn-file-by' },
        f.by === 'tools' ? 'the agent’s tools' : 'not the agent’s tools',
      ),
    ),
    open === null
      ? null
      : h(
          'div',
          { id: diffId, class: 'turn-file-diff' },
          open.error !== undefined
            ? h('p', { class: 'details' }, open.error)
            : open.diff === null
              ? h('p', { class: 'hint', role: 'status' }, 'Reading the diff…')
              : renderDiff(f.path, open.diff),
        ),
  );
}

function renderList(input: SessionViewInput, t: TurnFilesState, list: TurnFilesListResult): HTMLElement[] {
  const files = list.files;
  const added = files.reduce((n, f) => n + (f.added ?? 0), 0);
  const removed = files.reduce((n, f) => n + (f.removed ?? 0), 0);
  return [
    h(
      'p',
      { class: 'hint', 'data-testid': 'turn-files-summary' },
      files.length === 0
        ? 'This turn changed no file in the project.'
        : `${plural(files.length, 'file')}, +${added} −${removed} lines, between the snapshots ${short(list.before)} and ${short(list.after)}. “Not the agent’s tools”: its shell, another program, or you.`,
    ),
    files.length === 0
      ? null
      : h(
          'ul',
          { class: 'turn-file-list', 'data-testid': 'turn-file-list' },
          files.map((f, i) => renderFile(t, f, i, input.on.openDiff)),
        ),
    files.length === 0 ? null : renderRestore(input, t),
  ].filter((x): x is HTMLElement => x !== null);
}

/** The panel of the turn on screen; null offline, outside a project, on a server that keeps no snapshots, or before its files are read. */
export function renderTurnFiles(input: SessionViewInput): HTMLElement | null {
  const v = input.s.view;
  const t = input.turnFiles;
  if (v === null || !input.online || input.project === undefined || t === null || t.commit !== v.commit) return null;
  let body: HTMLElement[];
  if (t.status !== 'ready' || t.list === null)
    body = [
      h(
        'p',
        { class: 'hint', 'data-testid': 'turn-files-none', 'data-status': t.status },
        t.text ?? '',
        t.detail ? h('small', { class: 'details' }, t.detail) : null,
      ),
    ];
  else if (otherBranch(t))
    body = [
      h(
        'p',
        { class: 'hint', 'data-testid': 'turn-files-none', 'data-status': 'other-branch' },
        `The snapshots kept for turn ${t.turn} are of another branch’s turn ${t.turn} (session commit ${short(t.list.session_commit)}): a later turn of that number replaced this one’s.`,
      ),
    ];
  else body = renderList(input, t, t.list);
  return h(
    'section',
    { class: 'turn-files', 'data-testid': 'turn-files', 'aria-labelledby': 'turn-files-heading' },
    h('h3', { id: 'turn-files-heading' }, `Files changed in turn ${t.turn}`),
    body,
  );
}
