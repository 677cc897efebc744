import { createMirrorService } from '@entity-git/core';
import { CliError } from '../cli-error.js';
import type { Context } from '../context.js';
import { EXIT_OK, type ExitCode } from '../exit-codes.js';
import { println, type CliIo } from '../io.js';

export interface WatchArgs {
  /** Poll interval in ms (SQLite's data_version, PostgreSQL without a channel). */
  interval?: string | undefined;
  /** PostgreSQL: LISTEN on this channel (default: the config's `notifyChannel`). */
  channel?: string | undefined;
  /** The database URL (PostgreSQL's LISTEN opens a connection of its own). */
  db: string | undefined;
  json: boolean;
}

const DEFAULT_INTERVAL_MS = 100;

/**
 * `entity-git watch`: mirrors every session at start, then each session the database shows
 * changed, through the mirror service (one sync per session at a time, retries), until SIGINT or
 * SIGTERM; then it looks one last time, lets every queued sync finish, and exits 0.
 */
export async function runWatch(ctx: Context, io: CliIo, args: WatchArgs): Promise<ExitCode> {
  const interval = args.interval === undefined ? DEFAULT_INTERVAL_MS : Number(args.interval);
  if (!Number.isSafeInteger(interval) || interval < 10 || interval > 60_000)
    throw new CliError('--interval must be a whole number of ms from 10 to 60000');
  const changes = await ctx.watch({ channel: args.channel, connectionString: args.db });
  const service = createMirrorService({ mirror: ctx.mirror, dag: ctx.dag });
  const search = await (await import('./search.js')).indexEachSync(io, ctx.root, service);
  const line = (event: string, fields: Record<string, unknown>, text: string) => {
    if (args.json) println(io, JSON.stringify({ event, ...fields }));
    else println(io, text);
  };
  service.on('committed', ({ sessionId, result }) => {
    if (result.commitsWritten > 0 || result.branchesMoved.length > 0) {
      line(
        'committed',
        { sessionId, commits: result.commitsWritten, branches: result.branchesMoved },
        `${sessionId}: ${result.commitsWritten} commit${result.commitsWritten === 1 ? '' : 's'}${result.branchesMoved.length ? ` (${result.branchesMoved.join(', ')})` : ''}`,
      );
    }
  });
  service.on('retrying', ({ sessionId, error, attempt, delayMs }) =>
    io.stderr.write(`entity-git: ${sessionId}: ${error.code}, attempt ${attempt}, again in ${delayMs} ms\n`),
  );
  service.on('failed', ({ sessionId, error }) =>
    io.stderr.write(`entity-git: ${sessionId} failed to sync: ${error.code}: ${error.message}\n`),
  );

  let stopping = false;
  let wakeUp: () => void = () => undefined;
  const stop = () => {
    stopping = true;
    wakeUp();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  let failures = 0;
  try {
    line(
      'watching',
      { method: changes.method, intervalMs: interval, recognised: ctx.recognised },
      `watching (${changes.method}${changes.method === 'data_version' || changes.method === 'polling' ? ` every ${interval} ms` : ''}); Ctrl-C stops`,
    );
    for (;;) {
      // The last look happens after the stop was asked: a turn committed before the signal is mirrored.
      const last = stopping;
      try {
        for (const id of await changes.poll()) service.notify(id);
        failures = 0;
      } catch (err) {
        // The database may be locked or restarting; the next poll tries again.
        if (++failures === 1 || failures % 100 === 0) io.stderr.write(`entity-git: ${(err as Error).message}\n`);
      }
      if (last) break;
      await Promise.race([changes.wait(interval), new Promise<void>((r) => (wakeUp = r))]);
    }
    await service.close();
    await search.close();
    line('stopped', {}, 'stopped: every change seen was mirrored');
    return EXIT_OK;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    await changes.close();
  }
}
