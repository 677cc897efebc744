import { lintSource } from '@secretlint/core';
import { secretLintProfiler } from '@secretlint/profiler';
import { creator as recommend } from '@secretlint/secretlint-rule-preset-recommend';

/** One finding of the detector set in a text: `[start, end)` in UTF-16 units and the rule's short name. */
export interface DetectedRange {
  start: number;
  end: number;
  rule: string;
}

// Every rule of the preset but filter-comments: a `secretlint-disable` comment in a prompt or a
// tool's output must not turn detection off for the rest of the text. AWS access key ids are
// redacted too (the rule's `enableIDScanRule`): an id beside its secret in a transcript is half
// a credential, and its shape (`AKIA` and 16 of [A-Z0-9]) is precise.
const config = {
  rules: recommend.rules
    .filter((rule) => !rule.meta.id.endsWith('filter-comments'))
    .map((rule) =>
      rule.meta.id.endsWith('-aws')
        ? { id: rule.meta.id, rule, options: { enableIDScanRule: true } }
        : { id: rule.meta.id, rule },
    ),
};
const PREFIX = '@secretlint/secretlint-rule-';

/**
 * secretlint's recommended preset over one text. Loaded on demand (redactor.ts imports it
 * dynamically): the preset is ~200 KB that a mirror without redaction never loads.
 */
export async function detect(text: string): Promise<DetectedRange[]> {
  quietProfiler();
  const result = await lintSource({
    source: { content: text, filePath: '/entity-git.txt', ext: '.txt', contentType: 'text' },
    options: { config, noPhysicFilePath: true },
  });
  return result.messages.map((m) => ({
    start: m.range[0],
    end: m.range[1],
    rule: m.ruleId.startsWith(PREFIX) ? m.ruleId.slice(PREFIX.length) : m.ruleId,
  }));
}

/**
 * secretlint's profiler (one per process) marks every rule of every call on the global
 * performance timeline and keeps each entry in arrays it never empties, searching them on each
 * mark: a mirror that redacts every turn for days would grow its memory and slow down turn by
 * turn (measured: a turn's sync several times slower after a few hundred turns). Its timeline is
 * replaced by one that records nothing; nothing here reads the profile.
 */
function quietProfiler(): void {
  const profiler = secretLintProfiler as unknown as { perf: { mark(name: string): void; measure(name: string): void } };
  profiler.perf = { mark() {}, measure() {} };
}
