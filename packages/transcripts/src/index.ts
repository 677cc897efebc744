export type {
  ParsedSession,
  CompleteLines,
  RecordsRead,
  TranscriptParse,
  TranscriptWarning,
  TranscriptOptions,
} from './parsed-session.js';
export {
  completeLines,
  parseRecords,
  lastLineRecords,
  readJsonl,
  latestTime,
  type RecordsOptions,
  type JsonlRead,
} from './jsonl.js';
export { lineValues, type LineValues, type LineDamage } from './json-values.js';
export { parseClaudeCode, CLAUDE_CODE_AGENT } from './claude-code.js';
export { parseCodex, CODEX_AGENT } from './codex.js';
export { parseGemini, readGemini, GEMINI_AGENT } from './gemini.js';
export { parseMessages, readMessages, MESSAGES_AGENT } from './messages.js';
export { TranscriptDag } from './transcript-dag.js';
export { syncTranscript, rereadFrom } from './sync-transcript.js';
export {
  parseTranscript,
  TRANSCRIPT_FORMATS,
  type TranscriptFormat,
  type ParseOptions,
} from './parse-transcript.js';
