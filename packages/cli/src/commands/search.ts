import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { MirrorService, ReconcileEntry, Role, SearchHit } from '@entity-git/core';
import { defaultRoot } from '@entity-git/node-fs';
import { INDEX_FILE, SearchIndex } from '@entity-git/search';
import { CliError } from '../cli-error.js';
import { EXIT_DIFFERS, EXIT_OK, type ExitCode } from '../exit-codes.js';
import { printJson, println, type CliIo } from '../io.js';
import { printable } from '../printable.js';

export interface SearchArgs {
  query: string | undefined;
  root: string | undefined;
  session?: string | undefined;
  role?: string | undefined;
  branch?: string | undefined;
  allBranches: boolean;
  regex: boolean;
  limit?: string | undefined;
  reindex: boolean;
  compact: boolean;
  json: boolean;
}

/**
 * `entity-git search`: the messages of every session holding the query's words, from the index
 * beside the repositories (built from them first when it is missing, or asked: `--reindex`;
 * packed back to its smallest: `--compact`). No database is opened: the repositories alone answer.
 * Exit 1 when nothing matched, as grep.
 */
export async function runSearch(io: CliIo, args: SearchArgs): Promise<ExitCode> {
  const root = resolve(io.cwd ?? process.cwd(), args.root ?? defaultRoot());
  if (!existsSync(root)) throw new CliError(`no session root at ${root} (pass --root DIR)`);
  const fresh = !existsSync(join(root, INDEX_FILE));
  const index = new SearchIndex({ root });
  try {
    if (args.reindex || fresh) {
      const built = await index.reindex();
      io.stderr.write(
        `entity-git: search index ${fresh ? 'built' : 'rebuilt'} from ${built.sessions} repositor${built.sessions === 1 ? 'y' : 'ies'} (${built.added} messages)\n`,
      );
    } else if (args.compact) {
      // A rebuild ends compacted; a live index's pages split as it takes updates (docs/design.md §12).
      const before = statSync(index.file).size;
      index.compact();
      io.stderr.write(`entity-git: search index compacted: ${mib(before)} → ${mib(statSync(index.file).size)}\n`);
    }
    if (args.query === undefined) return EXIT_OK;
    const limit = args.limit === undefined ? undefined : Number(args.limit);
    if (args.limit !== undefined && !/^\d+$/.test(args.limit))
      throw new CliError(`--limit must be a whole number, got ${args.limit}`);
    const result = await index.search({
      text: args.query,
      session: args.session,
      role: args.role as Role | undefined,
      branch: args.branch,
      allBranches: args.allBranches,
      regex: args.regex,
      limit,
    });
    if (args.json) printJson(io, result);
    else for (const hit of result.hits) printHit(io, hit);
    if (!args.json && result.more) io.stderr.write(`entity-git: more messages match (--limit N shows more)\n`);
    return result.hits.length > 0 ? EXIT_OK : EXIT_DIFFERS;
  } finally {
    index.close();
  }
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

function printHit(io: CliIo, h: SearchHit): void {
  const others = h.branches.length > 1 ? ` (also ${h.branches.filter((b) => b !== h.branch).join(', ')})` : '';
  println(
    io,
    `${printable(h.session)} ${printable(h.branch)} turn ${h.turn} ${h.commit.slice(0, 12)} ${h.role} ${printable(h.node)}${others}`,
  );
  println(io, `    ${h.snippet}`);
}

/**
 * After `entity-git sync`: brings the search index up to date with what the sync wrote (the
 * sessions it backfilled or repaired), or builds it when the root has none yet. A failure is a
 * warning: the sync's own outcome stands, and the next sync (or `search --reindex`) mends the index.
 */
export async function indexAfterSync(io: CliIo, root: string, entries: readonly ReconcileEntry[]): Promise<void> {
  const written = entries.filter((e) => e.action === 'backfilled' || e.action === 'repaired');
  const fresh = !existsSync(join(root, INDEX_FILE));
  if (written.length === 0 && fresh) return;
  let index: SearchIndex | null = null;
  try {
    index = new SearchIndex({ root });
    if (fresh) await index.reindex();
    else for (const e of written) await index.update(e.sessionId);
  } catch (err) {
    io.stderr.write(`entity-git: warning: the search index was not updated: ${(err as Error).message}\n`);
  } finally {
    index?.close();
  }
}

/**
 * For `entity-git watch`: the search index follows every sync of `service` that wrote something
 * (built from the repositories first when the root has none). Failures are warnings, as after a
 * sync. `close` waits for the updates under way.
 */
export async function indexEachSync(
  io: CliIo,
  root: string,
  service: Pick<MirrorService, 'on'>,
): Promise<{ close(): Promise<void> }> {
  const warn = (err: unknown) =>
    io.stderr.write(`entity-git: warning: the search index was not updated: ${(err as Error).message}\n`);
  let index: SearchIndex;
  try {
    const fresh = !existsSync(join(root, INDEX_FILE));
    index = new SearchIndex({ root });
    if (fresh) await index.reindex();
  } catch (err) {
    warn(err);
    return { close: async () => undefined };
  }
  const stop = index.attach(service, (_session, err) => warn(err));
  return {
    close: async () => {
      stop();
      await index.settle();
      index.close();
    },
  };
}
