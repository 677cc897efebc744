// The replay's keys: ← / k the previous turn, → / j the next, wherever focus is except in a
// field (where arrows and letters are the user's typing); Ctrl/Cmd+Enter sends from the composer.
export interface ReplayKeys {
  prev(): void;
  next(): void;
  send(): void;
}

const typing = (el: EventTarget | null): boolean =>
  el instanceof HTMLElement && (el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName));

export function bindReplayKeys(target: Document, keys: ReplayKeys): void {
  target.addEventListener('keydown', (e) => {
    if (e.defaultPrevented || e.isComposing) return;
    if (
      e.key === 'Enter' &&
      (e.ctrlKey || e.metaKey) &&
      e.target instanceof HTMLTextAreaElement &&
      e.target.name === 'message'
    ) {
      e.preventDefault();
      keys.send();
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
    if (e.key === 'ArrowLeft' || e.key === 'k') {
      e.preventDefault();
      keys.prev();
    } else if (e.key === 'ArrowRight' || e.key === 'j') {
      e.preventDefault();
      keys.next();
    }
  });
}
