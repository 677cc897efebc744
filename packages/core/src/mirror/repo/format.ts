import { REPO_FORMAT } from '../../model/session-meta.js';

/** The format a config records (`[entitygit] format = N`), or null. */
export function configuredFormat(text: string | null): number | null {
  const value = entitygitValue(text, /^\s*format\s*=\s*(\d+)\s*$/i, () => true);
  return value === null ? null : Number(value);
}

/**
 * The first value in a config's `[entitygit]` section whose line `pattern` matches (its group 1)
 * and `accept` takes, or null: the reader of `format` here and of `layout` in repo/config.ts.
 */
export function entitygitValue(
  text: string | null,
  pattern: RegExp,
  accept: (value: string) => boolean,
): string | null {
  if (text === null) return null;
  let inSection = false;
  for (const line of text.split('\n')) {
    const section = /^\s*\[([^\]]*)\]/.exec(line);
    if (section) inSection = section[1]!.trim().toLowerCase() === 'entitygit';
    else if (inSection) {
      const m = pattern.exec(line);
      if (m && accept(m[1]!)) return m[1]!;
    }
  }
  return null;
}

/** The config text with `format = <REPO_FORMAT>` in its `[entitygit]` section (added when absent). */
export function withFormat(text: string): string {
  const body = text.replace(/\n?$/, '\n');
  const lines = body.split('\n');
  const out: string[] = [];
  let inSection = false;
  let done = false;
  for (const line of lines) {
    const section = /^\s*\[([^\]]*)\]/.exec(line);
    if (section) {
      inSection = section[1]!.trim().toLowerCase() === 'entitygit';
      out.push(line);
      if (inSection && !done) {
        out.push(`\tformat = ${REPO_FORMAT}`);
        done = true;
      }
    } else if (inSection && /^\s*format\s*=/i.test(line)) {
    } else out.push(line);
  }
  const joined = out.join('\n');
  return done ? joined : `${joined}[entitygit]\n\tformat = ${REPO_FORMAT}\n`;
}
