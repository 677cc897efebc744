import { readFileSync } from 'node:fs';
import { GLOBAL_OPTIONS, loosePositionals, parse, wantsHelp, type ParsedArgs } from './args.js';
import { COMMANDS, GROUPS, type Command } from './command-table.js';
import { CliError, exitCodeOf, messageOf } from './cli-error.js';
import { EXIT_OK, type ExitCode } from './exit-codes.js';
import { COMMAND_HELP, TOP_HELP } from './help.js';
import { println, type CliIo } from './io.js';
import { printableLines } from './printable.js';

export const COMMAND_NAME = 'entity-git';

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
  const stoodIn = command.unless?.some((name) => values[name] !== undefined) === true;
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
