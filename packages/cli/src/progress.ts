import type { CliIo } from './io.js';
import { printableLines } from './printable.js';

const BAR_WIDTH = 20;
const CLEAR_LINE = '\x1b[K';

/** `[#####---------------] 12/40 label`, cut to `columns - 1` code points so it never wraps. */
export function renderBar(done: number, total: number, label: string, columns = 80): string {
  const filled = total === 0 ? BAR_WIDTH : Math.round((done / total) * BAR_WIDTH);
  const line = `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${done}/${total} ${label}`.trimEnd();
  // A wrapped line cannot be redrawn by `\r`; a label shorter than the terminal keeps the bar intact.
  return Array.from(line)
    .slice(0, Math.max(columns - 1, 1))
    .join('');
}

/**
 * Progress of a many-session job: on a terminal one bar redrawn in place with `\r` (lines that
 * must stay, such as failures, are printed above it); elsewhere one plain line per step, no `\r`.
 */
export class Progress {
  private drawn = false;
  constructor(private readonly io: CliIo) {}

  get tty(): boolean {
    return this.io.isTTY === true;
  }

  /** Redraw the bar (terminal only). */
  bar(done: number, total: number, label: string): void {
    if (!this.tty) return;
    // A pseudo-terminal may report 0 columns; 80 is the classic width.
    const columns = this.io.columns !== undefined && this.io.columns > 0 ? this.io.columns : 80;
    this.io.stdout.write(`\r${renderBar(done, total, label, columns)}${CLEAR_LINE}`);
    this.drawn = true;
  }

  /** A line that stays: above the bar on a terminal, a plain line elsewhere. */
  line(text: string): void {
    if (this.drawn) this.io.stdout.write(`\r${CLEAR_LINE}`);
    this.io.stdout.write(`${printableLines(text)}\n`);
    this.drawn = false;
  }

  /** Leave the last bar on screen and end its line. */
  end(): void {
    if (this.drawn) this.io.stdout.write('\n');
    this.drawn = false;
  }
}
