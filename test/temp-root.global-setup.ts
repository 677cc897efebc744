// Every temporary directory the tests make (os.tmpdir(), git's and Chromium's too) lives under one
// directory of this run, removed when the run ends: runs used to leave thousands of directories
// (17 GB after a day of runs) in /tmp. The first project's setup makes it; the workers, forked
// after, inherit TMPDIR. A run that is killed leaves its one directory behind.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function tempRoot(): (() => void) | undefined {
  if (process.env.ENTITY_GIT_TEST_TMPDIR !== undefined) return undefined;
  const root = mkdtempSync(join(tmpdir(), 'entity-git-tests-'));
  process.env.ENTITY_GIT_TEST_TMPDIR = root;
  process.env.TMPDIR = root;
  // A child a crash test killed may still be writing: removal is retried, and never fails the run.
  return () => {
    try {
      rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    } catch (err) {
      console.warn(`could not remove the tests' temporary directory ${root}: ${String(err)}`);
    }
  };
}
