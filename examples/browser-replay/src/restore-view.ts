// The restore of a turn's files (`restore_turn_files`): the control, and the outcome — what was put
// back, what was skipped because someone other than the agent changed it since, and the undo of
// the restore (`undo_restore_turn_files`) — in a live region that stays the same element while one
// restore and its undo run, so a screen reader hears "Restoring…" and then the outcome.
import type { RestoreTurnFilesResult } from '@entity-git/core';
import { h, replace } from './dom.js';
import { plural } from './format.js';
import type { SessionViewInput } from './session-page.js';
import type { TurnFilesState } from './turn-files-view.js';

/** One restore asked from the page, for the turn with session commit `commit`, and its undo. */
export interface RestoreState {
  /** A new number per restore: the live region is one element per restore. */
  id: number;
  sessionId: string;
  commit: string;
  turn: number;
  status: 'running' | 'done' | 'failed' | 'undoing' | 'undone' | 'undo-failed';
  /** The restore's answer (kept through its undo). */
  result: RestoreTurnFilesResult | null;
  /** The undo's answer. */
  undo: RestoreTurnFilesResult | null;
  /** For the failures: the sentence, and the code with the library's message. */
  text?: string;
  detail?: string;
}

const REASON: Record<RestoreTurnFilesResult['skipped'][number]['reason'], string> = {
  'changed-since-last-snapshot': 'changed since the last snapshot (by you or another program)',
  'changed-outside-a-turn': 'changed between turns since then (by you or another program)',
  'outside-workdir': 'its folder now leads out of the project',
};

function skippedList(skipped: RestoreTurnFilesResult['skipped'], what: string): HTMLElement[] {
  if (skipped.length === 0) return [];
  return [
    h(
      'p',
      {},
      `Skipped ${plural(skipped.length, 'file')}, left as ${skipped.length === 1 ? 'it is' : 'they are'}: ${what}`,
    ),
    h(
      'ul',
      { class: 'paths skipped', 'data-testid': 'skipped-paths' },
      skipped.map((s) =>
        h(
          'li',
          { 'data-testid': 'skipped-path', 'data-path': s.path, 'data-reason': s.reason },
          h('span', { class: 'path' }, s.path),
          ` — ${REASON[s.reason]}`,
        ),
      ),
    ),
  ];
}

function pathList(paths: readonly string[], testId: string): HTMLElement | null {
  if (paths.length === 0) return null;
  return h(
    'ul',
    { class: 'paths', 'data-testid': `${testId}s` },
    paths.map((p) => h('li', { 'data-testid': testId, 'data-path': p }, h('span', { class: 'path' }, p))),
  );
}

function outcomeChildren(r: RestoreState): Array<HTMLElement | null> {
  if (r.status === 'running') return [h('p', {}, `Restoring the files of turn ${r.turn}…`)];
  if (r.status === 'failed' || r.status === 'undo-failed')
    return [
      h('p', {}, `${r.status === 'failed' ? 'Not restored.' : 'The restore was not undone.'} ${r.text ?? ''}`),
      h('small', { class: 'details', 'data-testid': 'restore-details' }, r.detail ?? ''),
    ];
  if (r.status === 'undoing') return [h('p', {}, 'Undoing the restore…')];
  if (r.status === 'undone') {
    const u = r.undo!;
    return [
      h(
        'p',
        { 'data-testid': 'restore-summary' },
        `Restore undone: ${plural(u.paths.length, 'file')} back as ${u.paths.length === 1 ? 'it was' : 'they were'} before it.`,
      ),
      pathList(u.paths, 'restored-path'),
      ...skippedList(u.skipped, 'changed since the restore, by someone other than the agent.'),
    ];
  }
  const d = r.result!;
  return [
    h(
      'p',
      { 'data-testid': 'restore-summary' },
      d.paths.length === 0
        ? 'Nothing was restored.'
        : `Restored ${plural(d.paths.length, 'file')} to ${d.paths.length === 1 ? 'its' : 'their'} state before turn ${r.turn}.`,
    ),
    pathList(d.paths, 'restored-path'),
    ...skippedList(d.skipped, 'someone other than the agent changed it since the turn, and their work is kept.'),
  ];
}

let outcome: { id: number; key: string; el: HTMLElement } | null = null;

/** The live region of `r`, made once per restore; its content is replaced only when the outcome changes. */
function outcomeOf(r: RestoreState): HTMLElement {
  if (outcome?.id !== r.id) {
    const el = h('div', {
      class: 'restore-outcome',
      role: 'status',
      'aria-live': 'polite',
      tabindex: '-1',
      'data-testid': 'restore-outcome',
    });
    outcome = { id: r.id, key: '', el };
  }
  const o = outcome;
  const key = `${r.status}/${r.text ?? ''}`;
  if (o.key !== key) {
    replace(o.el, ...outcomeChildren(r));
    o.key = key;
  }
  o.el.dataset.status = r.status;
  return o.el;
}

/** The restore control of the listed turn, and the last restore's outcome with its undo. */
export function renderRestore(input: SessionViewInput, t: TurnFilesState): HTMLElement {
  const r = input.restore !== null && input.restore.commit === t.commit ? input.restore : null;
  const busy = input.restore?.status === 'running' || input.restore?.status === 'undoing';
  // Once done, the way back is its undo; a new restore is offered after that, or after a failure.
  const offered = r === null || r.status === 'failed' || r.status === 'undone';
  const control = offered
    ? h(
        'div',
        { class: 'row wrap' },
        h(
          'button',
          {
            type: 'button',
            class: 'restore-files',
            'data-testid': 'restore-turn-files',
            disabled: busy || input.sending,
            'aria-describedby': 'restore-hint',
            onclick: () => input.on.restoreFiles(t.turn, t.commit),
          },
          `Restore these files to before turn ${t.turn}`,
        ),
        h(
          'small',
          { class: 'hint', id: 'restore-hint' },
          input.sending
            ? 'A turn is running: restore once it has ended.'
            : 'A file someone else changed since is skipped and listed, never overwritten; the restore can be undone.',
        ),
      )
    : null;
  const undo =
    r !== null && (r.status === 'done' || r.status === 'undoing' || r.status === 'undo-failed')
      ? h(
          'div',
          { class: 'row wrap' },
          h(
            'button',
            {
              type: 'button',
              class: 'undo-restore',
              'data-testid': 'undo-restore',
              disabled: busy || input.sending,
              onclick: () => input.on.undoRestore(),
            },
            r.status === 'undoing' ? 'Undoing…' : 'Undo this restore',
          ),
        )
      : null;
  return h('div', { class: 'turn-restore', 'data-testid': 'turn-restore' }, control, r ? outcomeOf(r) : null, undo);
}
