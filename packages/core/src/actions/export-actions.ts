import { EXPORT_FORMATS, type ExportFormat, exportFileName, exportSession } from '../export/export-session.js';
import type { ActionsOptions } from './actions.js';
import type { Handlers } from './handlers.js';
import { idParam, intParam, invalidArgument, optionalString, paramsObject, requireSession } from './params.js';

const MEDIA_TYPES: Record<ExportFormat, string> = {
  md: 'text/markdown; charset=utf-8',
  html: 'text/html; charset=utf-8',
  jsonl: 'application/x-ndjson; charset=utf-8',
};

/** `export_transcript`: a branch as a file people read (docs/design.md, 'Redaction' for what is replaced). */
export function exportActions(options: ActionsOptions): Handlers<'export_transcript'> {
  return {
    async export_transcript(params) {
      const p = paramsObject(params);
      const sessionId = idParam(p, 'session_id');
      const format = p.format as ExportFormat;
      if (!EXPORT_FORMATS.includes(format))
        invalidArgument(`format must be one of ${EXPORT_FORMATS.join(', ')}`, { param: 'format' });
      const branch = optionalString(p, 'branch');
      const turn = p.turn === undefined || p.turn === null ? undefined : intParam(p, 'turn', { fallback: 1, min: 1 });
      const session = await requireSession(options.dag, sessionId);
      const resolved = branch ?? (await options.mirror.branches(sessionId)).find((b) => b.head)?.name ?? 'main';
      const content = await exportSession(options.mirror, sessionId, {
        format,
        session,
        branch: resolved,
        ...(turn === undefined ? {} : { turn }),
        ...(options.redaction === undefined ? {} : { redaction: options.redaction }),
      });
      return {
        session_id: sessionId,
        format,
        file_name: exportFileName(sessionId, resolved, format),
        media_type: MEDIA_TYPES[format],
        content,
      };
    },
  };
}
