export { TranscriptFile, sessionIdOfFile } from './transcript-file.js';
export {
  findClaudeTranscripts,
  defaultClaudeProjectsDir,
  findCodexRollouts,
  defaultCodexSessionsDir,
} from './discover.js';
export {
  importTranscripts,
  watchTranscripts,
  type ImportEntry,
  type ImportFailure,
  type ImportReport,
  type ImportOptions,
  type WatchOptions,
} from './import-transcripts.js';
