#!/usr/bin/env node
import { main } from './main.js';

// A reader that goes away (`entity-git log s | head`) is not an error of ours.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

// Interrupted mid-sync: end the progress bar's line, and exit as shells expect (128 + SIGINT).
// Every write of the mirror is atomic (temp file + rename), so stopping anywhere is safe.
process.once('SIGINT', () => {
  if (process.stdout.isTTY) process.stdout.write('\n');
  process.exit(130);
});

process.exitCode = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  isTTY: process.stdout.isTTY === true,
  columns: process.stdout.columns,
  cwd: process.cwd(),
});
