// Child processes the CLI's live tests run side by side (a `watch`, a writer): their stdout as
// lines, their stderr, their exit; and a bounded wait for what they print.
import { type ChildProcess, spawn } from 'node:child_process';
import { REPO_ROOT } from './fixture.js';

export interface Proc {
  child: ChildProcess;
  /** Every whole line of stdout so far. */
  out: string[];
  err: string[];
  exit: Promise<number | null>;
}

/** `cmd args` started in the repository's root, its output collected as it comes. */
export function start(cmd: string, args: string[]): Proc {
  const child = spawn(cmd, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const out: string[] = [];
  const err: string[] = [];
  let partial = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => {
    const lines = (partial + c).split('\n');
    partial = lines.pop()!;
    out.push(...lines);
  });
  child.stderr!.setEncoding('utf8').on('data', (c: string) => err.push(c));
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, out, err, exit };
}

/** Waits until `ready()` holds, giving up after `limitMs` (a bound under the test's timeout, not a time assertion). */
export async function until(ready: () => boolean, what: string, limitMs: number): Promise<void> {
  for (const end = Date.now() + limitMs; !ready(); ) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
