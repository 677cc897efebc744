// Focus across a render: every change draws the page anew, so the control that had focus is found
// again in the new page (by its id, its test id, or its name in a form with a test id: the new
// project's fields) and focused, with the caret where it was in a text field. A control gone with
// what it did (the replay buttons, an undo, a restore) hands focus to what replaced it.

/** Where focus goes when the control that had it is no longer there, by that control's test id. */
const SUCCESSORS: Record<string, string> = {
  prev: 'turn',
  next: 'turn',
  // The undo button is disabled while it runs and gone once the edits are undone: focus goes to its outcome.
  'undo-turn': 'undo-outcome',
  // The same for a restore of a turn's files and its undo.
  'restore-turn-files': 'restore-outcome',
  'undo-restore': 'restore-outcome',
};

/** Notes the focused control before a render; the function it returns focuses it again after. */
export function keepFocus(root: HTMLElement, main: HTMLElement): () => void {
  const active = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  const testId = active?.dataset.testid ?? null;
  // An id names one element where a test id may name several (the files panel's rows).
  const id = active?.id || null;
  const name = active?.getAttribute('name') ?? null;
  const form = active?.closest<HTMLElement>('form[data-testid]')?.dataset.testid ?? null;
  const caret =
    active instanceof HTMLInputElement || active instanceof HTMLTextAreaElement
      ? { start: active.selectionStart, end: active.selectionEnd }
      : null;
  return () => {
    const again =
      (id ? document.getElementById(id) : null) ??
      (testId ? root.querySelector<HTMLElement>(`[data-testid="${testId}"]`) : null) ??
      (name && form ? root.querySelector<HTMLElement>(`[data-testid="${form}"] [name="${name}"]`) : null);
    if (again && !(again as HTMLButtonElement).disabled) {
      again.focus({ preventScroll: true });
      // A text field drawn anew keeps the caret where the user was typing (a checkbox has none).
      if (caret?.start != null && (again instanceof HTMLInputElement || again instanceof HTMLTextAreaElement))
        again.setSelectionRange(caret.start, caret.end ?? caret.start);
      return;
    }
    const successor = testId ? SUCCESSORS[testId] : undefined;
    if (successor) main.querySelector<HTMLElement>(`[data-testid=${successor}]`)?.focus({ preventScroll: true });
  };
}
