import { parseArgs } from 'node:util';
import { CliError } from './cli-error.js';

/** Every option any command takes; each command says which of them it accepts. */
export const OPTIONS = {
  db: { type: 'string' },
  config: { type: 'string' },
  root: { type: 'string' },
  identity: { type: 'string' },
  layout: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
  session: { type: 'string' },
  branch: { type: 'string' },
  description: { type: 'string' },
  project: { type: 'string' },
  commit: { type: 'string' },
  undo: { type: 'string' },
  remote: { type: 'string' },
  json: { type: 'boolean' },
  watch: { type: 'boolean' },
  apply: { type: 'boolean' },
  full: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  interval: { type: 'string' },
  channel: { type: 'string' },
  'quiet-time': { type: 'string' },
  strict: { type: 'boolean' },
  archive: { type: 'string' },
  all: { type: 'boolean' },
  role: { type: 'string' },
  'all-branches': { type: 'boolean' },
  regex: { type: 'boolean' },
  limit: { type: 'string' },
  reindex: { type: 'boolean' },
  compact: { type: 'boolean' },
  // scan, export and push (redact.ts)
  'allow-secrets': { type: 'boolean' },
  turn: { type: 'string' },
  format: { type: 'string' },
  output: { type: 'string', short: 'o' },
  'commit-url': { type: 'string' },
} as const;

export type OptionName = keyof typeof OPTIONS;
export const GLOBAL_OPTIONS: readonly OptionName[] = ['db', 'config', 'root', 'identity', 'layout', 'help'];

export interface ParsedArgs {
  values: { [K in OptionName]?: (typeof OPTIONS)[K]['type'] extends 'string' ? string : boolean };
  positionals: string[];
  /** Options as the user spelled them, in order (for "not an option of …" messages). */
  given: { name: OptionName; raw: string }[];
}

/**
 * Parses the whole command line against the union of every command's options, so global options
 * may stand before or after the command word; the command then rejects options not its own.
 */
export function parse(argv: readonly string[]): ParsedArgs {
  let result;
  try {
    result = parseArgs({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: true, tokens: true });
  } catch (err) {
    throw new CliError(parseErrorMessage(err as Error));
  }
  const given: ParsedArgs['given'] = [];
  for (const t of result.tokens) if (t.kind === 'option') given.push({ name: t.name as OptionName, raw: t.rawName });
  return { values: result.values as ParsedArgs['values'], positionals: result.positionals, given };
}

/** The positionals alone, for help and error hints when the line does not parse. */
export function loosePositionals(argv: readonly string[]): string[] {
  try {
    return parseArgs({ args: [...argv], options: OPTIONS, strict: false, allowPositionals: true }).positionals;
  } catch {
    return [];
  }
}

/** Whether `--help` or `-h` appears before any `--`. */
export function wantsHelp(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '--help' || a === '-h') return true;
  }
  return false;
}

function parseErrorMessage(err: Error): string {
  const code = (err as { code?: string }).code;
  const first = err.message.split('\n', 1)[0]!.replace(/\. To specify .*$/, '');
  const option = /'(-[^' ]+)/.exec(first)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option) return `unknown option ${option}`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && option) {
    if (/does not take an argument/.test(first)) return `option ${option} takes no value`;
    return `option ${option} needs a value (write ${option}=VALUE for a value starting with -)`;
  }
  return first.charAt(0).toLowerCase() + first.slice(1);
}
