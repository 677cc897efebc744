/**
 * `.gitignore` matching as gitignore(5) describes it: blank lines and `#` comments skipped,
 * trailing spaces trimmed unless escaped, `!` re-includes, a trailing `/` matches directories only,
 * a pattern with a `/` elsewhere is anchored to its file's directory (else it matches a name at any
 * depth), `*` `?` `[…]` never cross a `/`, `**` spans directories. Within a file the last matching
 * pattern wins; a deeper file wins over a shallower one. That a file below an excluded directory
 * cannot be re-included is the walker's part: it does not descend into an ignored directory.
 */
export interface IgnoreRule {
  readonly negated: boolean;
  readonly dirOnly: boolean;
  /** Matches the path relative to the rule's directory (anchored) or the last segment (not). */
  readonly anchored: boolean;
  readonly regex: RegExp;
}

function classToRegex(glob: string, start: number): [string, number] | null {
  let i = start + 1;
  let negate = false;
  if (glob[i] === '!' || glob[i] === '^') {
    negate = true;
    i++;
  }
  let body = '';
  let first = true;
  for (; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === ']' && !first) return [`[${negate ? '^/' : ''}${body}]`, i];
    first = false;
    if (c === '[' && glob[i + 1] === ':') {
      const end = glob.indexOf(':]', i + 2);
      if (end > 0) {
        const name = glob.slice(i + 2, end);
        const named: Record<string, string> = {
          alpha: 'a-zA-Z',
          digit: '0-9',
          alnum: 'a-zA-Z0-9',
          upper: 'A-Z',
          lower: 'a-z',
          space: ' \\t\\n\\r\\f\\v',
          xdigit: '0-9a-fA-F',
          punct: '!-\\/:-@\\[-`{-~',
          blank: ' \\t',
          cntrl: '\\x00-\\x1f\\x7f',
          print: ' -~',
          graph: '!-~',
        };
        if (named[name] === undefined) return null;
        body += named[name];
        i = end + 1;
        continue;
      }
    }
    if (c === '\\' && i + 1 < glob.length) {
      body += `\\${glob[++i]}`;
      continue;
    }
    body += c === ']' || c === '^' || c === '-' ? (c === '-' ? '-' : `\\${c}`) : c.replace(/[\\\]]/g, '\\$&');
  }
  return null;
}

/** The regex body for a wildmatch glob with `/` as the separator. */
function globToRegex(glob: string): string {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        let j = i;
        while (glob[j] === '*') j++;
        const atStart = i === 0 || glob[i - 1] === '/';
        const atEnd = j === glob.length || glob[j] === '/';
        if (atStart && atEnd) {
          if (j === glob.length) out += '.*';
          else {
            out += '(?:.*/)?';
            j++;
          }
          i = j - 1;
          continue;
        }
        out += '[^/]*';
        i = j - 1;
        continue;
      }
      out += '[^/]*';
    } else if (c === '?') out += '[^/]';
    else if (c === '[') {
      const cls = classToRegex(glob, i);
      if (cls === null) out += '\\[';
      else {
        out += cls[0];
        i = cls[1];
      }
    } else if (c === '\\' && i + 1 < glob.length) out += glob[++i]!.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    else out += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return out;
}

/** The rules of one ignore file's text. */
export function parseIgnore(text: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (let line of text.split(/\r?\n/)) {
    if (line === '' || line.startsWith('#')) continue;
    // Trailing spaces go, unless the last one is escaped.
    line = line.replace(/(?<!\\)[ ]+$/, '').replace(/\\ $/, ' ');
    if (line === '') continue;
    let negated = false;
    if (line.startsWith('!')) {
      negated = true;
      line = line.slice(1);
    } else if (line.startsWith('\\!') || line.startsWith('\\#')) line = line.slice(1);
    let dirOnly = false;
    if (line.endsWith('/') && !line.endsWith('\\/')) {
      dirOnly = true;
      line = line.replace(/\/+$/, '');
    }
    if (line === '') continue;
    const anchored = line.includes('/');
    if (line.startsWith('/')) line = line.slice(1);
    rules.push({ negated, dirOnly, anchored, regex: new RegExp(`^${globToRegex(line)}$`, 's') });
  }
  return rules;
}

/** The verdict of one file's rules for `rel` (relative to that file's directory): true, false, or null (no rule matched). */
export function matchRules(rules: readonly IgnoreRule[], rel: string, isDir: boolean): boolean | null {
  const name = rel.slice(rel.lastIndexOf('/') + 1);
  for (let i = rules.length - 1; i >= 0; i--) {
    const r = rules[i]!;
    if (r.dirOnly && !isDir) continue;
    if (r.regex.test(r.anchored ? rel : name)) return !r.negated;
  }
  return null;
}

/** Ignore files in effect at one point of a walk: `(directory relative to the root, rules)`, deepest last. */
export type IgnoreStack = ReadonlyArray<{ readonly dir: string; readonly rules: readonly IgnoreRule[] }>;

/** Whether `path` (relative to the repository root) is ignored by `stack`, deepest file first. */
export function isIgnored(stack: IgnoreStack, path: string, isDir: boolean): boolean {
  for (let i = stack.length - 1; i >= 0; i--) {
    const { dir, rules } = stack[i]!;
    const rel = dir === '' ? path : path.startsWith(`${dir}/`) ? path.slice(dir.length + 1) : null;
    if (rel === null) continue;
    const verdict = matchRules(rules, rel, isDir);
    if (verdict !== null) return verdict;
  }
  return false;
}
