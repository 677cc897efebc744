import { EntityGitError } from '@entity-git/git';
import { defaultMetadataKeys, type MetadataKeys } from '../model/commit-message.js';
import type { Session } from '../model/types.js';
import type { Mirror } from '../mirror/mirror.js';
import type { RedactionSetting } from '../redact/redaction-options.js';
import { countMarkers } from '../redact/markers.js';
import { Redactor } from '../redact/redactor.js';
import { renderHtml } from './render-html.js';
import { renderMarkdown } from './render-markdown.js';
import { cutTurns, type Transcript, transcriptMessage } from './transcript.js';

/** The formats of {@link exportSession}. */
export type ExportFormat = 'md' | 'html' | 'jsonl';
export const EXPORT_FORMATS: readonly ExportFormat[] = ['md', 'html', 'jsonl'];

/** Options of {@link exportSession}. */
export interface ExportOptions {
  /** `md` (Markdown), `html` (one self-contained page) or `jsonl` (one node per line). Required. */
  format: ExportFormat;
  /** The branch. Default: HEAD's. */
  branch?: string;
  /** The last turn exported (1…M). Default: the branch's tip (every turn). */
  turn?: number;
  /** The session row, for the title, model and agent (redacted as the messages are). Default: none. */
  session?: Session | null;
  /**
   * What is redacted (docs/design.md, 'Redaction'), applied again on export, so a repository
   * written without redaction exports without secrets too. Default `{ preset: 'recommend' }`.
   */
  redaction?: RedactionSetting;
  /** Where tool names and tokens are read in metadata, as the mirror's option. Default `defaultMetadataKeys`. */
  metadataKeys?: Partial<MetadataKeys>;
  /** A link for each turn's commit, `{commit}` replaced by its id (a git host's commit page). Default: the id alone. */
  commitUrl?: string;
}

/**
 * A branch of a session as a file people read (`md`, `html`) or other tools read (`jsonl`): its
 * turns from the first to `turn`, read from the session's repository (`mirror.log` and one
 * `mirror.read`), redacted. `BRANCH_NOT_FOUND`, `SESSION_NOT_FOUND`, `COMMIT_NOT_FOUND` as the
 * mirror answers them; `INVALID_ARGUMENT` for a format or turn out of range.
 */
export async function exportSession(
  mirror: Pick<Mirror, 'log' | 'read' | 'branches'>,
  sessionId: string,
  options: ExportOptions,
): Promise<string> {
  if (!EXPORT_FORMATS.includes(options.format))
    throw new EntityGitError(
      'INVALID_ARGUMENT',
      `format must be one of ${EXPORT_FORMATS.join(', ')}: ${JSON.stringify(options.format)}`,
    );
  const transcript = await readTranscript(mirror, sessionId, options);
  if (options.format === 'jsonl')
    return transcript.items.flatMap((t) => t.messages.map((m) => `${JSON.stringify(m.node)}\n`)).join('');
  return options.format === 'md' ? renderMarkdown(transcript) : renderHtml(transcript);
}

/** The suggested file name of an export: `<session>-<branch>.<format>`, path characters replaced. */
export function exportFileName(sessionId: string, branch: string, format: ExportFormat): string {
  return `${`${sessionId}-${branch}`.replace(/[^A-Za-z0-9._-]+/g, '_')}.${format}`;
}

async function readTranscript(
  mirror: Pick<Mirror, 'log' | 'read' | 'branches'>,
  sessionId: string,
  options: ExportOptions,
): Promise<Transcript> {
  const branch = options.branch ?? (await mirror.branches(sessionId)).find((b) => b.head)?.name;
  if (branch === undefined)
    throw new EntityGitError('BRANCH_NOT_FOUND', `session ${JSON.stringify(sessionId)} has no branch yet`, {
      sessionId,
    });
  const log = await mirror.log(sessionId, { branch });
  const turns = log.length;
  const last = options.turn ?? turns;
  if (!Number.isSafeInteger(last) || last < 1 || last > turns)
    throw new EntityGitError(
      'INVALID_ARGUMENT',
      `turn must be an integer from 1 to ${turns}: ${JSON.stringify(options.turn)}`,
      {
        param: 'turn',
      },
    );
  // Newest first: turn k is the (turns - k)-th entry, whatever its trailers say.
  const commits = new Map(log.map((c, i) => [turns - i, c.sha]));
  const view = await mirror.read(sessionId, commits.get(last)!, { branch });
  const redactor = options.redaction === false ? null : new Redactor(options.redaction ?? {});
  const keys = { ...defaultMetadataKeys, ...options.metadataKeys };
  const nodes = redactor === null ? view.messages : await Promise.all(view.messages.map((n) => redactor.redactNode(n)));
  const counts = new Map<string, number>();
  for (const n of nodes) {
    countMarkers(n.content, counts);
    countMarkers(n.metadata, counts);
  }
  const row = options.session ?? null;
  return {
    sessionId,
    session: row === null || redactor === null ? row : await redactor.redactSession(row),
    branch,
    turns,
    redacting: redactor !== null,
    redactions: [...counts].sort(([a], [b]) => (a < b ? -1 : 1)),
    commitUrl: options.commitUrl ?? null,
    items: cutTurns(
      nodes.map((n) => transcriptMessage(n, keys)),
      commits,
    ),
  };
}
