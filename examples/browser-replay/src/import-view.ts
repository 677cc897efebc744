// "Import git projects": a directory of the server's machine searched for git repositories, the
// plan shown first (a dry run: which would become projects, which are projects already), and the
// projects created only when the user confirms. Nothing is written in the repositories.
import type { ImportProjectsResult } from 'ws-server/protocol';
import { h } from './dom.js';
import { plural } from './format.js';

export interface ImportForm {
  open: boolean;
  dir: string;
  plan: ImportProjectsResult | null;
  busy: boolean;
  error: { text: string; detail: string } | null;
}

export const blankImportForm = (): ImportForm => ({ open: false, dir: '', plan: null, busy: false, error: null });

export function renderImport(
  f: ImportForm,
  online: boolean,
  on: { rerender(): void; find(): void; apply(): void },
): HTMLElement {
  if (!f.open) {
    return h(
      'button',
      {
        class: 'link',
        'data-testid': 'import-projects',
        disabled: !online,
        title: online ? null : 'projects are imported on the server',
        onclick: () => {
          f.open = true;
          on.rerender();
        },
      },
      'Import git projects…',
    );
  }
  const fresh = f.plan?.candidates.filter((c) => c.status === 'new') ?? [];
  return h(
    'form',
    {
      class: 'new-project',
      'data-testid': 'import-form',
      onsubmit: (e: Event) => {
        e.preventDefault();
        on.find();
      },
    },
    h('h3', {}, 'Import git projects'),
    h(
      'label',
      {},
      'Directory to search (absolute path on the server’s machine)',
      h('input', {
        name: 'import-dir',
        required: true,
        placeholder: '/home/you/code',
        value: f.dir,
        'data-testid': 'import-dir',
        oninput: (e: Event) => {
          f.dir = (e.target as HTMLInputElement).value;
          f.plan = null;
        },
      }),
    ),
    h(
      'p',
      { class: 'hint' },
      'Each git repository found (3 levels deep) that is not a project yet becomes one, named after its folder. Nothing is written in the repositories.',
    ),
    f.error
      ? h(
          'div',
          { class: 'error', role: 'alert', 'data-testid': 'import-error' },
          h('p', {}, f.error.text),
          h('small', { class: 'details' }, f.error.detail),
        )
      : null,
    f.plan
      ? h(
          'div',
          { 'data-testid': 'import-plan' },
          f.plan.candidates.length === 0
            ? h('p', { class: 'hint' }, 'No git repository there.')
            : h(
                'ul',
                { class: 'import-plan' },
                f.plan.candidates.map((c) =>
                  h(
                    'li',
                    {
                      'data-testid': 'import-row',
                      'data-status': c.status,
                      'data-workdir': c.workdir,
                      title: c.workdir,
                    },
                    h('strong', {}, c.name),
                    ' ',
                    h(
                      'small',
                      {},
                      c.status === 'new'
                        ? 'will be created'
                        : c.status === 'created'
                          ? 'created'
                          : c.status === 'refused'
                            ? `refused: ${c.reason ?? ''}`
                            : 'a project already',
                    ),
                  ),
                ),
              ),
        )
      : null,
    h(
      'div',
      { class: 'row' },
      f.plan && !f.plan.applied && fresh.length > 0
        ? h(
            'button',
            { type: 'button', 'data-testid': 'import-apply', disabled: f.busy, onclick: on.apply },
            `Create ${plural(fresh.length, 'project')}`,
          )
        : h(
            'button',
            { type: 'submit', 'data-testid': 'import-find', disabled: f.busy },
            f.busy ? 'Searching…' : 'Find repositories',
          ),
      h(
        'button',
        {
          type: 'button',
          class: 'link',
          onclick: () => {
            Object.assign(f, { open: false, plan: null, error: null });
            on.rerender();
          },
        },
        f.plan?.applied ? 'Close' : 'Cancel',
      ),
    ),
  );
}
