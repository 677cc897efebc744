import { open, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { assertId, EntityGitError, isEntityGitError, type JsonValue } from '@entity-git/core';
import { parseClaudeCode } from '../claude-code.js';
import { parseCodex } from '../codex.js';
import { completeLines, parseRecords } from '../jsonl.js';
import { parseMessages, readMessages } from '../messages.js';
import type { ParsedSession } from '../parsed-session.js';
import type { TranscriptFormat } from '../parse-transcript.js';

/** The session id a transcript file stands for: its name without `.jsonl` / `.json`. */
export function sessionIdOfFile(path: string): string {
  const id = basename(path).replace(/\.(jsonl|json|ndjson)$/i, '');
  assertId(id, `session id of ${path}`);
  return id;
}

/**
 * One transcript on disk, read incrementally: a JSONL file is read from where the last read
 * stopped (the complete lines only; a torn last line waits), a JSON document is read whole when
 * its size changed. A file that shrank was replaced and is read again from the start.
 */
export class TranscriptFile {
  readonly sessionId: string;
  private offset = 0;
  private lineCount = 0;
  private size = -1;
  private mtimeMs = -1;
  private records: JsonValue[] = [];
  private messages: JsonValue[] = [];
  private sessions: ParsedSession[] = [];

  constructor(
    readonly path: string,
    readonly format: TranscriptFormat,
    sessionId?: string,
  ) {
    this.sessionId = sessionId ?? sessionIdOfFile(path);
  }

  /** The sessions of the complete part read so far. */
  get parsed(): readonly ParsedSession[] {
    return this.sessions;
  }

  /**
   * Reads what was appended since the last call; resolves to true when the sessions changed.
   * Throws `TRANSCRIPT_INVALID` for a complete line that is not JSON (never for a torn last line).
   */
  async poll(): Promise<boolean> {
    let st;
    try {
      st = await stat(this.path);
    } catch (cause) {
      throw new EntityGitError(
        'TRANSCRIPT_INVALID',
        `cannot read ${this.path}: ${(cause as Error).message}`,
        { path: this.path },
        { cause },
      );
    }
    if (st.size === this.size && st.mtimeMs === this.mtimeMs) return false;
    const shrank = st.size < this.offset;
    this.size = st.size;
    this.mtimeMs = st.mtimeMs;
    if (this.format === 'messages' && !this.isJsonl()) return this.readDocument();
    if (shrank) {
      this.offset = 0;
      this.lineCount = 0;
      this.records = [];
    }
    const fresh = await readFrom(this.path, this.offset, st.size);
    const { lines, consumed } = completeLines(fresh);
    if (consumed === 0) return false;
    const records = parseRecords(lines, this.lineCount + 1);
    this.offset += consumed;
    this.lineCount += lines.length;
    if (records.length === 0) return false;
    this.records.push(...records);
    this.sessions =
      this.format === 'claude-code'
        ? parseClaudeCode(this.records, { sessionId: this.sessionId })
        : this.format === 'codex'
          ? [parseCodex(this.records, { sessionId: this.sessionId })]
          : [parseMessages(this.records, { sessionId: this.sessionId })];
    return true;
  }

  private isJsonl(): boolean {
    return /\.(jsonl|ndjson)$/i.test(this.path);
  }

  private async readDocument(): Promise<boolean> {
    const bytes = await readFrom(this.path, 0, this.size);
    let messages: JsonValue[];
    try {
      messages = readMessages(bytes);
    } catch (err) {
      // A document still being written parses later; the messages read before stay.
      if (isEntityGitError(err, 'TRANSCRIPT_INVALID') && err.data.incomplete === true && this.messages.length > 0)
        return false;
      throw err;
    }
    if (JSON.stringify(messages) === JSON.stringify(this.messages)) return false;
    this.messages = messages;
    this.sessions = [parseMessages(messages, { sessionId: this.sessionId })];
    return true;
  }
}

async function readFrom(path: string, from: number, to: number): Promise<Uint8Array> {
  const handle = await open(path, 'r');
  try {
    const buf = new Uint8Array(Math.max(0, to - from));
    let done = 0;
    while (done < buf.length) {
      const { bytesRead } = await handle.read(buf, done, buf.length - done, from + done);
      if (bytesRead === 0) break;
      done += bytesRead;
    }
    return buf.subarray(0, done);
  } finally {
    await handle.close();
  }
}
