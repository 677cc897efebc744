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
