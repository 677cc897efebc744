/**
 * The values of a git config file, by `section.key` or `section.subsection.key` (section and key
 * lower-cased, as git compares them; the subsection keeps its case). Multi-valued keys keep every
 * value in order. `[include]` is not followed: the keys read here are repository-local by nature.
 */
export type GitConfig = ReadonlyMap<string, readonly string[]>;

function unquote(raw: string): string {
  let out = '';
  let quoted = false;
  let pendingSpace = '';
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (!quoted && (c === '#' || c === ';')) break;
    if (c === '"') {
      out += pendingSpace;
      pendingSpace = '';
      quoted = !quoted;
      continue;
    }
    if (c === '\\' && i + 1 < raw.length) {
      const n = raw[++i]!;
      out += pendingSpace + (({ n: '\n', t: '\t', b: '\b' } as Record<string, string>)[n] ?? n);
      pendingSpace = '';
      continue;
    }
    if (!quoted && (c === ' ' || c === '\t')) {
      if (out !== '') pendingSpace += c;
      continue;
    }
    out += pendingSpace + c;
    pendingSpace = '';
  }
  return out;
}

export function parseGitConfig(text: string): GitConfig {
  const values = new Map<string, string[]>();
  let section = '';
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!;
    // A value continued with a trailing backslash.
    while (/(?<!\\)(?:\\\\)*\\$/.test(line) && i + 1 < lines.length) line = line.slice(0, -1) + lines[++i]!;
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#') || trimmed.startsWith(';')) continue;
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)$/.exec(trimmed);
    if (header) {
      const [, name, sub] = header;
      section = sub === undefined ? name!.toLowerCase() : `${name!.toLowerCase()}.${sub.replace(/\\(.)/g, '$1')}`;
      const rest = header[3]!.trim();
      if (rest === '' || rest.startsWith('#') || rest.startsWith(';')) continue;
      line = rest;
    }
    const kv = /^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=(.*))?$/.exec(line);
    if (!kv || section === '') continue;
    const key = `${section}.${kv[1]!.toLowerCase()}`;
    const value = kv[2] === undefined ? 'true' : unquote(kv[2]);
    const list = values.get(key) ?? [];
    list.push(value);
    values.set(key, list);
  }
  return values;
}

/** The last value of `key`, or undefined. */
export function configValue(config: GitConfig, key: string): string | undefined {
  const first = key.indexOf('.');
  const last = key.lastIndexOf('.');
  const name =
    first === last
      ? key.toLowerCase()
      : `${key.slice(0, first).toLowerCase()}${key.slice(first, last)}${key.slice(last).toLowerCase()}`;
  const list = config.get(name);
  return list?.[list.length - 1];
}

/** A boolean as git reads one; `fallback` when unset or not a boolean. */
export function configBool(config: GitConfig, key: string, fallback: boolean): boolean {
  const v = configValue(config, key)?.toLowerCase();
  if (v === undefined) return fallback;
  if (['true', 'yes', 'on', '1'].includes(v)) return true;
  if (['false', 'no', 'off', '0', ''].includes(v)) return false;
  return fallback;
}
