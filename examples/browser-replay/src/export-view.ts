// Export: the branch being viewed as a file to keep or share (Markdown, one self-contained HTML
// page, or JSONL), made by the `export_transcript` action — redacted, online or offline alike —
// and handed to the browser as a download.
import type { ExportFormat } from '@entity-git/core';
import type { Backend } from './backend.js';
import { h } from './dom.js';

const FORMATS: [ExportFormat, string][] = [
  ['md', 'Markdown'],
  ['html', 'HTML page'],
  ['jsonl', 'JSONL'],
];

/** The format picker and its button, for the replay head. */
export function renderExport(branch: string, run: (branch: string, format: ExportFormat) => void): HTMLElement {
  const select = h(
    'select',
    { 'data-testid': 'export-format', 'aria-label': 'Export format' },
    FORMATS.map(([value, label]) => h('option', { value }, label)),
  ) as HTMLSelectElement;
  return h(
    'span',
    { class: 'export' },
    select,
    h('button', { 'data-testid': 'export', onclick: () => run(branch, select.value as ExportFormat) }, 'Export'),
  );
}

/** Ask for the export and save it as the file the action names. */
export async function downloadTranscript(
  backend: Backend,
  sessionId: string,
  branch: string,
  format: ExportFormat,
): Promise<void> {
  const r = await backend.call('export_transcript', { session_id: sessionId, branch, format });
  const url = URL.createObjectURL(new Blob([r.content], { type: r.media_type }));
  // No inline style: the app's Content-Security-Policy refuses one; an empty link shows nothing.
  const a = h('a', { href: url, download: r.file_name });
  document.body.append(a);
  a.click();
  a.remove();
  // The browser has the file once the click is handled; the URL is freed after it.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}
