import { readFileSync } from 'node:fs';
import { GLOBAL_OPTIONS, loosePositionals, parse, wantsHelp, type OptionName, type ParsedArgs } from './args.js';
import { CliError, exitCodeOf, messageOf } from './cli-error.js';
import type { Context } from './context.js';
import { EXIT_OK, type ExitCode } from './exit-codes.js';
import { COMMAND_HELP, TOP_HELP } from './help.js';
import { println, type CliIo } from './io.js';
import { printableLines } from './printable.js';

export const COMMAND_NAME = 'entity-git';

interface Command {
  /** `sync`, or `projects create`. */
  name: string;
  /** Options of its own, besides the global ones. */
  options: OptionName[];
  /** Names of its positional arguments, for messages; the first `required` of them must be given. */
  args: string[];
  required: number;
  /** An option that, given, stands in for the required arguments (`log --project`). */
  unless?: OptionName;
  /** It writes rows (projects): it may create entity-git's missing tables; the others never run DDL. */
  writes?: boolean;
  /** It writes nothing to the database: the database is opened read-only (the driver refuses any write). */
  readOnly?: boolean;
  /** Another name of the command named here: its help is that command's (`clone` is `restore`). */
  aliasOf?: string;
  /** Takes any number of positional arguments past `args` (`import messages FILE…`). */
  variadic?: boolean;
  /** A command that reads no database (`import`): runs without a context. */
  alone?(io: CliIo, values: ParsedArgs['values'], args: string[]): Promise<ExitCode>;
  run?(ctx: Context, io: CliIo, values: ParsedArgs['values'], args: string[]): Promise<ExitCode>;
}

// Command modules load on demand: `--help`, `--version` and usage errors then answer without
// loading the database driver and the git layer.
const history = () => import('./commands/history.js');
const redact = () => import('./commands/redact.js');

// scan and export (commands/redact.ts).
const REDACT_COMMANDS: Command[] = [
  {
    name: 'scan',
    readOnly: true,
    options: ['session', 'json'],
    args: [],
    required: 0,
    run: async (ctx, io, v) => (await redact()).runScan(ctx, io, { session: v.session, json: v.json === true }),
  },
  {
    name: 'export',
    readOnly: true,
    options: ['branch', 'turn', 'format', 'output', 'commit-url'],
    args: ['SESSION'],
    required: 1,
    run: async (ctx, io, v, [session]) => (await redact()).runExport(ctx, io, { session: session!, values: v }),
  },
];
const projects = () => import('./commands/projects.js');

const restore: Command = {
  name: 'restore',
  readOnly: true,
  options: ['remote', 'session', 'json'],
  args: [],
  required: 0,
  run: async (ctx, io, v) =>
    (await import('./commands/remote.js')).runRestore(ctx, io, {
      remote: requireRemote(v.remote),
      session: v.session,
      json: v.json === true,
    }),
};

const importCommand = (
  format: 'claude-code' | 'codex' | 'gemini' | 'messages',
  args: string[],
  required: number,
): Command => ({
  name: `import ${format}`,
  options: ['json', 'watch', 'quiet-time', 'strict'],
  args,
  required,
  variadic: format === 'messages',
  alone: async (io, values, paths) => (await import('./commands/import.js')).runImport(io, { format, paths, values }),
});

const COMMANDS: Command[] = [
  importCommand('claude-code', ['DIR'], 0),
  importCommand('codex', ['DIR'], 0),
  importCommand('gemini', ['DIR'], 0),
  importCommand('messages', ['FILE…'], 1),
  {
    name: 'sync',
    readOnly: true,
    options: ['session', 'json', 'full', 'quiet-time', 'dry-run'],
    args: [],
    required: 0,
    run: async (ctx, io, v) =>
      v['dry-run'] === true
        ? (await import('./commands/dry-run.js')).runDryRun(ctx, io, { session: v.session, json: v.json === true })
        : (await import('./commands/sync.js')).runSync(ctx, io, {
            session: v.session,
            json: v.json === true,
            full: v.full === true,
          }),
  },
  {
    name: 'verify',
    readOnly: true,
    options: ['session', 'json', 'full', 'quiet-time'],
    args: [],
    required: 0,
    run: async (ctx, io, v) =>
      (await import('./commands/verify.js')).runVerify(ctx, io, {
        session: v.session,
        json: v.json === true,
        full: v.full === true,
      }),
  },
  {
    name: 'log',
    readOnly: true,
    options: ['branch', 'project', 'json'],
    args: ['SESSION'],
    required: 1,
    unless: 'project',
    run: async (ctx, io, v, [session]) => {
      if (v.project !== undefined) {
        if (session !== undefined || v.branch !== undefined)
          throw new CliError('log --project PROJECT takes no SESSION and no --branch (see: entity-git log --help)');
        return (await projects()).runProjectLog(ctx, io, { project: v.project, json: v.json === true });
      }
      if (session === undefined)
        throw new CliError('log: missing SESSION (or --project PROJECT) (see: entity-git log --help)');
      return (await history()).runLog(ctx, io, { session, branch: v.branch, json: v.json === true });
    },
  },
  {
    name: 'show',
    readOnly: true,
    options: ['branch', 'json'],
    args: ['SESSION', 'TURN|SHA'],
    required: 1,
    run: async (ctx, io, v, [session, target]) =>
      (await history()).runShow(ctx, io, { session: session!, target, branch: v.branch, json: v.json === true }),
  },
  {
    name: 'branches',
    readOnly: true,
    options: ['json'],
    args: ['SESSION'],
    required: 1,
    run: async (ctx, io, v, [session]) =>
      (await history()).runBranches(ctx, io, { session: session!, json: v.json === true }),
  },
  {
    name: 'stats',
    readOnly: true,
    options: ['branch', 'json'],
    args: ['SESSION'],
    required: 1,
    run: async (ctx, io, v, [session]) =>
      (await import('./commands/stats.js')).runStats(ctx, io, {
        session: session!,
        branch: v.branch,
        json: v.json === true,
      }),
  },
  {
    name: 'search',
    options: ['session', 'role', 'branch', 'all-branches', 'regex', 'limit', 'reindex', 'json'],
    args: ['QUERY'],
    required: 1,
    unless: 'reindex',
    alone: async (io, v, [query]) =>
      (await import('./commands/search.js')).runSearch(io, {
        query,
        root: v.root,
        session: v.session,
        role: v.role,
        branch: v.branch,
        allBranches: v['all-branches'] === true,
        regex: v.regex === true,
        limit: v.limit,
        reindex: v.reindex === true,
        json: v.json === true,
      }),
  },
  {
    name: 'prune',
    readOnly: true,
    options: ['dry-run', 'archive', 'all', 'json'],
    args: [],
    required: 0,
    run: async (ctx, io, v) =>
      (await import('./commands/retention.js')).runPrune(ctx, io, {
        dryRun: v['dry-run'] === true,
        archive: v.archive,
        all: v.all === true,
        json: v.json === true,
      }),
  },
  {
    name: 'du',
    readOnly: true,
    options: ['json'],
    args: [],
    required: 0,
    run: async (ctx, io, v) => (await import('./commands/retention.js')).runDu(ctx, io, { json: v.json === true }),
  },
  {
    name: 'watch',
    readOnly: true,
    options: ['interval', 'channel', 'json', 'quiet-time'],
    args: [],
    required: 0,
    run: async (ctx, io, v) =>
      (await import('./commands/watch.js')).runWatch(ctx, io, {
        interval: v.interval,
        channel: v.channel,
        db: v.db,
        json: v.json === true,
      }),
  },
  restore,
  // `clone` is what a git user reaches for on a fresh machine; it is `restore`, word for word.
  { ...restore, name: 'clone', aliasOf: 'restore' },
  {
    name: 'push',
    readOnly: true,
    options: ['remote', 'session', 'json', 'allow-secrets'],
    args: [],
    required: 0,
    run: async (ctx, io, v) =>
      (await import('./commands/remote.js')).runPush(ctx, io, {
        remote: requireRemote(v.remote),
        session: v.session,
        json: v.json === true,
        allowSecrets: v['allow-secrets'] === true,
      }),
  },
  ...REDACT_COMMANDS,
  {
    name: 'projects list',
    readOnly: true,
    options: ['json'],
    args: [],
    required: 0,
    run: async (ctx, io, v) => (await projects()).runProjectsList(ctx, io, { json: v.json === true }),
  },
  {
    name: 'projects create',
    options: ['description', 'json'],
    args: ['NAME', 'WORKDIR'],
    required: 2,
    writes: true,
    run: async (ctx, io, v, [name, workdir]) =>
      (await projects()).runProjectsCreate(ctx, io, {
        name: name!,
        workdir: workdir!,
        description: v.description,
        json: v.json === true,
      }),
  },
  {
    name: 'projects add-session',
    options: ['json'],
    args: ['PROJECT', 'SESSION'],
    required: 2,
    writes: true,
    run: async (ctx, io, v, [project, session]) =>
      (await projects()).runProjectsAddSession(ctx, io, {
        project: project!,
        session: session!,
        json: v.json === true,
      }),
  },
  {
    name: 'projects status',
    options: ['json'],
    args: ['PROJECT', 'STATUS'],
    required: 1,
    run: async (ctx, io, v, [project, status]) =>
      (await import('./commands/projects-status.js')).runProjectsStatus(ctx, io, {
        project: project!,
        status,
        json: v.json === true,
      }),
  },
  {
    name: 'projects import',
    options: ['apply', 'json'],
    args: ['DIR'],
    required: 1,
    run: async (ctx, io, v, [dir]) =>
      (await import('./commands/projects-import.js')).runProjectsImport(ctx, io, {
        dir: dir!,
        apply: v.apply === true,
        json: v.json === true,
      }),
  },
  {
    name: 'projects revert',
    options: ['commit', 'project', 'json'],
    args: ['SESSION', 'TURN'],
    required: 1,
    run: async (ctx, io, v, [session, turn]) =>
      (await import('./commands/projects-revert.js')).runProjectsRevert(ctx, io, {
        session: session!,
        turn,
        commit: v.commit,
        project: v.project,
        json: v.json === true,
      }),
  },
  {
    name: 'projects diff',
    readOnly: true,
    options: ['project', 'json'],
    args: ['SESSION', 'TURN', 'PATH'],
    required: 2,
    run: async (ctx, io, v, [session, turn, path]) =>
      (await import('./commands/projects-files.js')).runProjectsDiff(ctx, io, {
        session: session!,
        turn: turn!,
        path,
        project: v.project,
        json: v.json === true,
      }),
  },
  {
    name: 'projects mode',
    options: ['json'],
    args: ['PROJECT', 'MODE'],
    required: 1,
    run: async (ctx, io, v, [project, mode]) =>
      (await import('./commands/projects-files.js')).runProjectsMode(ctx, io, {
        project: project!,
        mode,
        json: v.json === true,
      }),
  },
  {
    name: 'projects restore',
    readOnly: true,
    options: ['undo', 'project', 'json'],
    args: ['SESSION', 'TURN', 'PATH'],
    required: 2,
    run: async (ctx, io, v, [session, turn, path]) =>
      (await import('./commands/projects-files.js')).runProjectsRestore(ctx, io, {
        session: session!,
        turn: turn!,
        path,
        undo: v.undo,
        project: v.project,
        json: v.json === true,
      }),
  },
];

const GROUPS = new Set(['projects', 'import']);

function requireRemote(remote: string | undefined): string {
  if (remote === undefined || remote === '')
    throw new CliError('--remote URL is required, e.g. --remote https://git.example.com/sessions/{session}.git');
  return remote;
}

/** The command a positional list names: the longest match, plus its remaining arguments. */
function findCommand(positionals: readonly string[]): {
  command: Command | null;
  group: string | null;
  rest: string[];
} {
  const [first, second] = positionals;
  if (first !== undefined && GROUPS.has(first)) {
    const command = COMMANDS.find((c) => c.name === `${first} ${second}`) ?? null;
    return { command, group: first, rest: positionals.slice(command ? 2 : 1) };
  }
  return { command: COMMANDS.find((c) => c.name === first) ?? null, group: null, rest: positionals.slice(1) };
}

export function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * Runs the `entity-git` command line `argv` (without node and the script) and resolves to its
 * exit code. Never throws and never exits the process: errors are one line on `io.stderr`.
 */
export async function main(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  try {
    return await dispatch(argv, io);
  } catch (err) {
    io.stderr.write(`${COMMAND_NAME}: ${printableLines(messageOf(err))}\n`);
    // The one-line message is the contract; the stack is there when a bug is being chased.
    if (process.env.ENTITY_GIT_DEBUG && err instanceof Error && err.stack) io.stderr.write(`${err.stack}\n`);
    return exitCodeOf(err);
  }
}

async function dispatch(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  if (wantsHelp(argv)) {
    const { command, group } = findCommand(loosePositionals(argv));
    println(io, command ? COMMAND_HELP[command.aliasOf ?? command.name] : group ? COMMAND_HELP[group] : TOP_HELP);
    return EXIT_OK;
  }
  let parsed: ParsedArgs;
  try {
    parsed = parse(argv);
  } catch (err) {
    const { command, group } = findCommand(loosePositionals(argv));
    throw new CliError(
      `${(err as Error).message} (see: ${COMMAND_NAME} ${command?.name ?? group ?? ''}${command || group ? ' ' : ''}--help)`,
    );
  }
  const { values, positionals, given } = parsed;
  if (positionals.length === 0) {
    if (values.version === true && given.every((g) => g.name === 'version' || GLOBAL_OPTIONS.includes(g.name))) {
      println(io, `${COMMAND_NAME} ${version()}`);
      return EXIT_OK;
    }
    throw new CliError(`missing command (see: ${COMMAND_NAME} --help)`);
  }
  const { command, group, rest } = findCommand(positionals);
  if (!command) {
    if (group) {
      const sub = positionals[1];
      const subs = COMMANDS.filter((c) => c.name.startsWith(`${group} `)).map((c) => c.name.slice(group.length + 1));
      throw new CliError(
        sub === undefined
          ? `${group} needs a subcommand: ${subs.join(', ')} (see: ${COMMAND_NAME} ${group} --help)`
          : `unknown ${group} subcommand ${JSON.stringify(sub)}: expected ${subs.join(', ')}`,
      );
    }
    throw new CliError(`unknown command ${JSON.stringify(positionals[0])} (see: ${COMMAND_NAME} --help)`);
  }
  const hint = `(see: ${COMMAND_NAME} ${command.name} --help)`;
  for (const g of given) {
    if (!GLOBAL_OPTIONS.includes(g.name) && !command.options.includes(g.name))
      throw new CliError(`${command.name} takes no option ${g.raw} ${hint}`);
  }
  const stoodIn = command.unless !== undefined && values[command.unless] !== undefined;
  if (rest.length < command.required && !stoodIn)
    throw new CliError(
      `${command.name}: missing ${command.args.slice(rest.length, command.required).join(' ')} ${hint}`,
    );
  if (rest.length > command.args.length && !command.variadic)
    throw new CliError(`${command.name}: unexpected argument ${JSON.stringify(rest[command.args.length])} ${hint}`);
  for (const key of ['session', 'branch', 'project', 'archive'] as const) {
    if (values[key] === '') throw new CliError(`--${key} needs a non-empty value`);
  }

  if (command.alone) return command.alone(io, values, rest);
  const { openContext } = await import('./context.js');
  const ctx = await openContext({
    db: values.db,
    config: values.config,
    writes: command.writes === true,
    readOnly: command.readOnly === true,
    root: values.root,
    identity: values.identity,
    layout: values.layout,
    quietTime: values['quiet-time'],
    cwd: io.cwd ?? process.cwd(),
    warn: (line) => io.stderr.write(`${COMMAND_NAME}: warning: ${line}\n`),
  });
  if (ctx.reading !== null && values.json !== true) io.stderr.write(`${COMMAND_NAME}: ${ctx.reading}\n`);
  try {
    return await command.run!(ctx, io, values, rest);
  } finally {
    await ctx.close().catch(() => undefined);
  }
}
