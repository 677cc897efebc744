import { printableLines } from './printable.js';

/** Where a command writes; injected so tests and embedders can run `main` in-process. */
export interface CliIo {
  stdout: { write(chunk: string): unknown };
  stderr: { write(chunk: string): unknown };
  /** Whether stdout is a terminal: `sync` then draws a progress bar redrawn with `\r`. */
  isTTY?: boolean;
  /** The terminal's width, to keep the bar on one line (default 80). */
  columns?: number;
  /** Base for relative `--db` and `--root` paths (default `process.cwd()`). */
  cwd?: string;
}

export function printJson(io: CliIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function println(io: CliIo, line = ''): void {
  io.stdout.write(`${printableLines(line)}\n`);
}
