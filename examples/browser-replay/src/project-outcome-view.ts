import { h } from './dom.js';
import { projectHref, short } from './format.js';
import type { SessionViewInput } from './session-page.js';

/** Above the chat: the agent's commit of the last turn, or the design's warning while the user's tree is dirty. */
export function renderProjectOutcome(input: SessionViewInput): HTMLElement | null {
  const t = input.projectTurn;
  const st = input.projectStatus;
  const project = input.project;
  // The warning: as read now (project_status), or, when that is unknown (offline), as the last turn reported it.
  const warning =
    st !== undefined
      ? st.dirty && st.warning !== null
        ? { text: st.warning, paths: st.user_paths }
        : null
      : t?.status === 'skipped' && t.reason === 'uncommitted-changes' && t.warning !== null
        ? { text: t.warning, paths: t.user_paths }
        : null;
  const parts: HTMLElement[] = [];
  if (t?.status === 'committed') {
    parts.push(
      h(
        'div',
        { class: 'project-turn committed', 'data-testid': 'project-commit', 'data-sha': t.commit.sha },
        h('span', {}, 'Agent commit '),
        h('span', { class: 'sha' }, short(t.commit.sha)),
        ` in ${project?.name ?? 'the project'}: `,
        h('span', { class: 'subject', 'data-testid': 'project-commit-subject' }, t.commit.subject),
        ' ',
        h('a', { href: projectHref(t.project_id), class: 'link' }, 'project history →'),
      ),
    );
  } else if (t?.status === 'failed') {
    parts.push(
      h(
        'div',
        { class: 'project-turn failed', 'data-testid': 'project-turn-failed' },
        'The agent’s edits could not be committed to the project.',
        h('small', { class: 'details' }, `${t.code}: ${t.message}`),
      ),
    );
  } else if (t?.status === 'skipped' && t.reason !== 'uncommitted-changes' && t.warning !== null) {
    parts.push(
      h(
        'div',
        { class: 'project-turn skipped', 'data-testid': 'project-turn-skipped', 'data-reason': t.reason },
        t.warning,
      ),
    );
  }
  if (warning !== null) {
    // The design's sentence, word for word (the ⚠ is drawn by CSS, outside the text).
    parts.push(
      h(
        'div',
        {
          class: 'project-warning',
          role: 'status',
          'data-testid': 'project-warning',
          'data-reason': 'uncommitted-changes',
          title: warning.paths.length > 0 ? `your uncommitted changes: ${warning.paths.join(', ')}` : null,
        },
        warning.text,
      ),
    );
  }
  return parts.length === 0 ? null : h('div', { class: 'project-outcome', 'data-testid': 'project-outcome' }, parts);
}
