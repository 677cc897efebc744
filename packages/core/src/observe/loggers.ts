import { isEntityGitError } from '@entity-git/git';
import type { LogFields, Logger, LogLevel } from './logger.js';

const LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

/** The part of `console` the console logger writes to (core is typed for no platform). */
export type LineSink = Record<LogLevel, (line: string) => void>;

export interface ConsoleLoggerOptions {
  /** The lowest level printed (default `'info'`). */
  level?: LogLevel;
  /** Where lines go (default the global `console`). */
  console?: LineSink;
}

/**
 * A {@link Logger} that prints each event as one line, `[entity-git] <event> {fields as JSON}`,
 * through `console.debug/info/warn/error`, from `level` up.
 */
export function consoleLogger(options: ConsoleLoggerOptions = {}): Logger {
  const min = LEVELS.indexOf(options.level ?? 'info');
  const out = options.console ?? (globalThis as unknown as { console: LineSink }).console;
  const at = (level: LogLevel) => (event: string, fields: LogFields) => {
    if (LEVELS.indexOf(level) >= min) out[level](`[entity-git] ${event} ${JSON.stringify(fields)}`);
  };
  return Object.freeze({ debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') });
}

/**
 * Hands one event to `logger`, if any. A logger that throws is ignored: logging must never fail
 * or change the work it reports on.
 */
export function emitLog(logger: Logger | undefined, level: LogLevel, event: string, fields: LogFields): void {
  if (logger === undefined) return;
  try {
    logger[level](event, fields);
  } catch {
    // a logger's bug must not break a sync
  }
}

const clock = (globalThis as { performance?: { now(): number } }).performance;

/** A monotonic time in milliseconds (`performance.now()`, in Node and browsers alike). */
export function now(): number {
  return clock ? clock.now() : Date.now();
}

/** Milliseconds since `start` (a {@link now}), to a tenth. */
export function since(start: number): number {
  return Math.round((now() - start) * 10) / 10;
}

/** An error's code for a log line (`UNKNOWN` for anything not an EntityGitError). */
export const codeOf = (err: unknown): string => (isEntityGitError(err) ? err.code : 'UNKNOWN');
/** An error's message for a log line. */
export const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));
