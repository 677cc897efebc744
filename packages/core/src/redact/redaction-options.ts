import { EntityGitError } from '@entity-git/git';

/**
 * One pattern of the user's own, redacted besides the detector set's findings: every match of
 * `pattern` (a regular expression's source, compiled with the `g` and `u` flags plus `flags`)
 * becomes `[REDACTED:<name>]`.
 */
export interface RedactionPattern {
  /** The rule name in the marker and the commit message: 1 to 40 of `[a-z0-9_-]`. Required. */
  name: string;
  /** The regular expression's source (a string, so a configuration is plain data). Required. */
  pattern: string;
  /** Extra flags: any of `i`, `m`, `s`. Default none. */
  flags?: string;
}

/**
 * What the mirror redacts before a node's file and its commit message are built (docs/design.md,
 * 'Redaction'). Part of the mirror's configuration, as the metadata keys are: every mirror of one
 * DAG must use the same one to write the same commit ids.
 */
export interface RedactionOptions {
  /**
   * The detector set: `recommend` is secretlint's recommended preset (cloud keys, GitHub, GitLab,
   * npm, Slack, OpenAI, Anthropic and other tokens, private keys, credentials in URLs and
   * connection strings); `none` runs the user's patterns alone. Default `recommend`.
   */
  preset?: 'recommend' | 'none';
  /** The user's own patterns, applied after the preset's. Default none. */
  patterns?: readonly RedactionPattern[];
}

/** The mirror option: a configuration, or `false` for none (default: `{ preset: 'recommend' }`). */
export type RedactionSetting = RedactionOptions | false;

const NAME = /^[a-z0-9_-]{1,40}$/;

/** `options` checked (`INVALID_OPTION` for a bad preset, name, pattern or flag), defaults filled in, frozen. */
export function checkRedaction(options: RedactionOptions): Readonly<Required<RedactionOptions>> {
  const preset = options.preset ?? 'recommend';
  if (preset !== 'recommend' && preset !== 'none')
    throw new EntityGitError('INVALID_OPTION', `redaction.preset ${JSON.stringify(preset)}`);
  const patterns = (options.patterns ?? []).map((p) => Object.freeze({ ...p }));
  for (const p of patterns) compilePattern(p);
  return Object.freeze({ preset, patterns: Object.freeze(patterns) });
}

/**
 * A user pattern compiled; `INVALID_OPTION` unless its name is 1 to 40 of `[a-z0-9_-]`, its flags
 * of `i`, `m`, `s` and its pattern a valid expression (with the `u` flag).
 */
export function compilePattern(p: RedactionPattern): { name: string; re: RegExp } {
  const flags = p.flags ?? '';
  try {
    if (NAME.test(p.name) && /^[ims]*$/.test(flags)) return { name: p.name, re: new RegExp(p.pattern, `gu${flags}`) };
  } catch {}
  throw new EntityGitError('INVALID_OPTION', `redaction pattern ${JSON.stringify(p)}`);
}
