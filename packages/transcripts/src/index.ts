export type { ParsedSession, CompleteLines, TranscriptOptions } from './parsed-session.js';
export { completeLines, parseRecords } from './jsonl.js';
export { parseClaudeCode, CLAUDE_CODE_AGENT, type ClaudeCodeOptions } from './claude-code.js';
export { parseCodex, CODEX_AGENT, type CodexOptions } from './codex.js';
export { parseMessages, readMessages, MESSAGES_AGENT, type MessagesOptions } from './messages.js';
export { TranscriptDag } from './transcript-dag.js';
export { parseTranscript, TRANSCRIPT_FORMATS, type TranscriptFormat } from './parse-transcript.js';
