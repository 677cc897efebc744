// The commands of `entity-git`: each one's name, options, arguments, and what runs it.
import type { OptionName, ParsedArgs } from './args.js';
import { CliError } from './cli-error.js';
import type { Context } from './context.js';
import type { ExitCode } from './exit-codes.js';
import type { CliIo } from './io.js';
export interface Command {
  /** `sync`, or `projects create`. */
  name: string;
  /** Options of its own, besides the global ones. */
  options: OptionName[];
  /** Names of its positional arguments, for messages; the first `required` of them must be given. */
  args: string[];
  required: number;
  /** Options any of which, given, stands in for the required arguments (`log --project`). */
  unless?: OptionName[];
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

export const COMMANDS: Command[] = [
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
    unless: ['project'],
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
    options: ['session', 'role', 'branch', 'all-branches', 'regex', 'limit', 'reindex', 'compact', 'json'],
    args: ['QUERY'],
    required: 1,
    unless: ['reindex', 'compact'],
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
        compact: v.compact === true,
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

/** The first words that only name a group of commands (`projects create`, `import codex`). */
export const GROUPS = new Set(['projects', 'import']);

function requireRemote(remote: string | undefined): string {
  if (remote === undefined || remote === '')
    throw new CliError('--remote URL is required, e.g. --remote https://git.example.com/sessions/{session}.git');
  return remote;
}
