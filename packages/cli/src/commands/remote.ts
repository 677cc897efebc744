import { defineRemote, pushSession, restoreSessions, type Remote } from '@entity-git/remote';
import { nodeStorage } from '@entity-git/node-fs';
import { CliError } from '../cli-error.js';
import { requireSession, type Context } from '../context.js';
import { EXIT_DIFFERS, EXIT_OK, type ExitCode } from '../exit-codes.js';
import { printJson, println, type CliIo } from '../io.js';

/** `--remote` with `{session}`; credentials from ENTITY_GIT_REMOTE_USER / ENTITY_GIT_REMOTE_TOKEN (never the URL). */
async function remoteOf(url: string): Promise<Remote> {
  if (!url.includes('{session}'))
    throw new CliError(
      `--remote must contain {session}, e.g. https://git.example.com/sessions/{session}.git (got ${JSON.stringify(url)})`,
    );
  const http = (await import('isomorphic-git/http/node')).default;
  const token = process.env.ENTITY_GIT_REMOTE_TOKEN;
  const username = process.env.ENTITY_GIT_REMOTE_USER ?? 'entity-git';
  return defineRemote({ url, http, ...(token ? { onAuth: () => ({ username, password: token }) } : {}) });
}

async function sessionsOf(ctx: Context, session: string | undefined): Promise<string[]> {
  if (session === undefined) return ctx.dag.listSessions();
  await requireSession(ctx, session);
  return [session];
}

export interface RestoreJson {
  ok: boolean;
  counts: Record<'restored' | 'fetched' | 'skipped' | 'missing' | 'empty' | 'failed', number>;
  sessions: { sessionId: string; action: string; error: { code: string; message: string } | null }[];
}

/** Rebuild session repositories from the git host: every session of the DAG (or one). */
export async function runRestore(
  ctx: Context,
  io: CliIo,
  args: { remote: string; session?: string | undefined; json: boolean },
): Promise<ExitCode> {
  const remote = await remoteOf(args.remote);
  const sessions = await sessionsOf(ctx, args.session);
  const report = await restoreSessions({
    remote,
    storage: nodeStorage(),
    root: ctx.root,
    sessions,
    onProgress: (e, p) => {
      if (!args.json)
        println(io, `${p.done}/${sessions.length} ${e.sessionId} ${e.action}${e.error ? ` (${e.error.code})` : ''}`);
    },
  });
  const failed = report.counts.failed;
  if (args.json) {
    printJson(io, {
      ok: failed === 0,
      counts: report.counts,
      sessions: report.entries.map((e) => ({
        sessionId: e.sessionId,
        action: e.action,
        error: e.error ? { code: e.error.code, message: e.error.message } : null,
      })),
    } satisfies RestoreJson);
  } else {
    println(
      io,
      `restored ${report.counts.restored}, fetched ${report.counts.fetched}, missing ${report.counts.missing}, empty ${report.counts.empty}, failed ${failed}`,
    );
  }
  return failed === 0 ? EXIT_OK : EXIT_DIFFERS;
}

/** Push every branch of each session repository (every session, or one) to the git host. */
export async function runPush(
  ctx: Context,
  io: CliIo,
  args: { remote: string; session?: string | undefined; json: boolean; allowSecrets?: boolean },
): Promise<ExitCode> {
  const remote = await remoteOf(args.remote);
  const sessions = await sessionsOf(ctx, args.session);
  const scan = {
    allowSecrets: args.allowSecrets === true,
    ...(ctx.config.redaction ? { redaction: ctx.config.redaction } : {}),
  };
  const out: { sessionId: string; ok: boolean; error: { code: string; message: string } | null }[] = [];
  for (const sessionId of sessions) {
    try {
      await pushSession({ remote, storage: nodeStorage(), root: ctx.root, sessionId, ...scan });
      out.push({ sessionId, ok: true, error: null });
      if (!args.json) println(io, `${out.length}/${sessions.length} ${sessionId} pushed`);
    } catch (err) {
      const e = err as { code?: string; message?: string };
      out.push({ sessionId, ok: false, error: { code: e.code ?? 'REMOTE_ERROR', message: e.message ?? String(err) } });
      if (!args.json) println(io, `${out.length}/${sessions.length} ${sessionId} failed (${e.code ?? 'error'})`);
      // Which secret where (never the secret itself): the message names rule, file, commit and line.
      if (!args.json && e.code === 'SECRETS_FOUND') println(io, `  ${e.message}`);
    }
  }
  const ok = out.every((o) => o.ok);
  if (args.json) printJson(io, { ok, sessions: out });
  return ok ? EXIT_OK : EXIT_DIFFERS;
}
