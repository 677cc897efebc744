import { open, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { assertId, DEFAULT_QUIET_MS, EntityGitError, isEntityGitError, type JsonValue } from '@entity-git/core';
import { parseClaudeCode } from '../claude-code.js';
import { parseCodex } from '../codex.js';
import { parseGemini } from '../gemini.js';
import { lastLineRecords, latestTime, readJsonl } from '../jsonl.js';
import { parseMessages, readMessages } from '../messages.js';
import type { ParsedSession, TranscriptWarning } from '../parsed-session.js';
import type { TranscriptFormat } from '../parse-transcript.js';

/** How long a transcript must be quiet to be taken as finished, by default: core's, the same for every source (5 minutes). */
export { DEFAULT_QUIET_MS };

/** The session id a transcript file stands for: its name without `.jsonl` / `.json`. */
export function sessionIdOfFile(path: string): string {
  const id = basename(path).replace(/\.(jsonl|json|ndjson)$/i, '');
  assertId(id, `session id of ${path}`);
  return id;
}

/** Options of {@link TranscriptFile.poll}. */
export interface PollOptions {
  /**
   * Milliseconds after which a quiet transcript is finished (default {@link DEFAULT_QUIET_MS}),
   * quiet as `quietSince` says. `0`: every transcript is finished; `Infinity`: only the
   * transcript's own marks close a turn.
   */
  quietMs?: number;
  /**
   * What a transcript read for the first time has been quiet since: `record` (the default), its
   * newest record's timestamp — a one-shot import of transcripts copied or restored from
   * elsewhere, whose modification times say nothing; `write`, its modification time — a
   * follower (`watchTranscripts`), for which quiet is the time since the file last grew.
   * Either way, from the poll that sees it grow on.
   */
  quietSince?: 'record' | 'write';
  /** Refuse a damaged line (`TRANSCRIPT_INVALID`) instead of skipping it with a warning. Default false. */
  strict?: boolean;
  /** The time now, in ms since the epoch (default `Date.now()`). */
  now?: number;
}

/** What one {@link TranscriptFile.poll} found. */
export interface PollResult {
  /** The sessions changed (read again: new records, or the transcript became finished or stopped being so). */
  changed: boolean;
  /** Lines this poll skipped: complete lines read for the first time, and a finished transcript's damaged last line. */
  warnings: TranscriptWarning[];
}

/**
 * One transcript on disk, read incrementally: a JSONL file is read from where the last read
 * stopped (the complete lines; a last line without its newline is read only while the
 * transcript is finished, and again each time it grows), a JSON document is read whole when it
 * changed. A file that shrank was replaced and is read again from the start.
 */
export class TranscriptFile {
  readonly sessionId: string;
  private offset = 0;
  private lineCount = 0;
  private size = -1;
  private mtimeMs = -1;
  private records: JsonValue[] = [];
  /** The bytes after the last complete line, as last read. */
  private tail = new Uint8Array(0);
  private messages: JsonValue[] = [];
  private sessions: ParsedSession[] = [];
  /** When the transcript last grew, in ms since the epoch. */
  private grewAt = 0;
  private finishedNow = false;

  constructor(
    readonly path: string,
    readonly format: TranscriptFormat,
    sessionId?: string,
  ) {
    this.sessionId = sessionId ?? sessionIdOfFile(path);
  }

  /** The sessions of the part read so far. */
  get parsed(): readonly ParsedSession[] {
    return this.sessions;
  }

  /** Whether the last parse took the transcript as finished (quiet long enough). */
  get finished(): boolean {
    return this.finishedNow;
  }

  /**
   * Reads what was appended since the last call, and parses again when that or the quiet time
   * changed the sessions. Throws `TRANSCRIPT_INVALID` for a file it cannot read, and with
   * `strict` for a damaged line.
   */
  async poll(options: PollOptions = {}): Promise<PollResult> {
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
    const now = options.now ?? Date.now();
    const quiet = options.quietMs ?? DEFAULT_QUIET_MS;
    const grew = st.size !== this.size || st.mtimeMs !== this.mtimeMs;
    const first = this.size < 0;
    if (!grew) {
      const due = now - this.grewAt >= quiet;
      if (this.finishedNow || !due) return { changed: false, warnings: [] };
      return this.isDocument() ? this.parseDocument(true) : this.parseLines(true, options);
    }
    this.size = st.size;
    this.mtimeMs = st.mtimeMs;
    if (this.isDocument()) {
      const read = await this.readDocument();
      this.grewAt = first ? this.firstQuiet(read ?? this.messages, st.mtimeMs, options) : now;
      if (read === null) return { changed: false, warnings: [] };
      this.messages = read;
      return this.parseDocument(now - this.grewAt >= quiet);
    }
    if (st.size < this.offset) {
      this.offset = 0;
      this.lineCount = 0;
      this.records = [];
    }
    const fresh = await readFrom(this.path, this.offset, st.size);
    const read = readJsonl(fresh, { firstLine: this.lineCount + 1, strict: options.strict === true });
    this.offset += read.consumed;
    this.lineCount += read.lines;
    this.records.push(...read.records);
    this.tail = fresh.slice(read.consumed);
    this.grewAt = first ? this.firstQuiet(this.records, st.mtimeMs, options) : now;
    const finished = now - this.grewAt >= quiet;
    if (read.records.length === 0 && finished === this.finishedNow && !finished)
      return { changed: false, warnings: read.warnings };
    const parsed = this.parseLines(finished, options);
    return { changed: parsed.changed, warnings: [...read.warnings, ...parsed.warnings] };
  }

  /** When a transcript read for the first time last grew, in ms. */
  private firstQuiet(records: readonly JsonValue[], mtimeMs: number, options: PollOptions): number {
    if (options.quietSince === 'write') return mtimeMs;
    const t = latestTime(records);
    return t === null ? mtimeMs : t * 1000;
  }

  /** A whole JSON document read at once: a message log's `.json`, or the older Gemini session file. */
  private isDocument(): boolean {
    return (this.format === 'messages' || this.format === 'gemini') && !this.isJsonl();
  }

  private isJsonl(): boolean {
    return /\.(jsonl|ndjson)$/i.test(this.path);
  }

  /** The sessions of the records read, and of the last line when finished. */
  private parseLines(finished: boolean, options: PollOptions): PollResult {
    // Set first: a strict refusal of the last line is reported once, not at every poll.
    this.finishedNow = finished;
    const tail =
      finished && this.tail.length > 0
        ? lastLineRecords(this.tail, this.lineCount + 1, { strict: options.strict === true })
        : { records: [], warnings: [] };
    const records = tail.records.length > 0 ? [...this.records, ...tail.records] : this.records;
    const sessionId = this.sessionId;
    this.sessions =
      this.format === 'claude-code'
        ? parseClaudeCode(records, { sessionId, finished })
        : this.format === 'codex'
          ? [parseCodex(records, { sessionId, finished })]
          : this.format === 'gemini'
            ? [parseGemini(records, { sessionId, finished })]
            : [parseMessages(records, { sessionId, finished })];
    return { changed: true, warnings: tail.warnings };
  }

  private parseDocument(finished: boolean): PollResult {
    this.finishedNow = finished;
    // The older Gemini file is one document: its messages replayed as records.
    this.sessions =
      this.format === 'gemini'
        ? [parseGemini(this.messages, { sessionId: this.sessionId, finished })]
        : [parseMessages(this.messages, { sessionId: this.sessionId, finished })];
    return { changed: true, warnings: [] };
  }

  /** The messages of the document, or null when they are those read before (or it is still being written). */
  private async readDocument(): Promise<JsonValue[] | null> {
    const bytes = await readFrom(this.path, 0, this.size);
    let messages: JsonValue[];
    try {
      messages = readMessages(bytes).messages;
    } catch (err) {
      // A document still being written parses later; the messages read before stay.
      if (isEntityGitError(err, 'TRANSCRIPT_INVALID') && err.data.incomplete === true && this.messages.length > 0)
        return null;
      throw err;
    }
    return JSON.stringify(messages) === JSON.stringify(this.messages) ? null : messages;
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
