export {
  TranscriptFile,
  sessionIdOfFile,
  DEFAULT_QUIET_MS,
  type PollOptions,
  type PollResult,
} from './transcript-file.js';
export {
  findTranscripts,
  defaultClaudeProjectsDir,
  defaultCodexSessionsDir,
  findGeminiSessions,
  defaultGeminiDir,
} from './discover.js';
export {
  importTranscripts,
  watchTranscripts,
  type ImportEntry,
  type ImportFailure,
  type ImportWarning,
  type ImportReport,
  type ImportOptions,
  type WatchOptions,
} from './import-transcripts.js';
export { summarizeImport, type ImportSummary } from './import-summary.js';
