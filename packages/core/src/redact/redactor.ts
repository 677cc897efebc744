import { EntityGitError } from '@entity-git/git';
import type { DagNode, JsonValue, Session } from '../model/types.js';
import type { DetectedRange } from './detector.js';
import { redactionMarker } from './markers.js';
import { checkRedaction, compilePattern, type RedactionOptions } from './redaction-options.js';

type Detect = (text: string) => Promise<DetectedRange[]>;

// The shortest secret the preset knows (a URL's `a://b:c@d`) is longer than this: shorter strings
// (roles, flags, numbers as text) are not handed to the detector set at all.
const MIN_PRESET_LENGTH = 8;

/**
 * Replaces secrets in text, JSON values, nodes and session rows (docs/design.md, 'Redaction').
 * Deterministic: the same input and configuration give the same output on every platform. The
 * preset's detector (secretlint) is loaded on first use, so the first bundle a browser loads
 * does not carry it; a detector that cannot load is `REDACTION_UNAVAILABLE`.
 */
export class Redactor {
  readonly options: Readonly<Required<RedactionOptions>>;
  readonly #patterns: { name: string; re: RegExp }[];
  #detect: Promise<Detect> | null = null;

  /** Checks `options` (`INVALID_OPTION` for a bad preset, name, pattern or flag). */
  constructor(options: RedactionOptions = {}) {
    this.options = checkRedaction(options);
    this.#patterns = this.options.patterns.map(compilePattern);
  }

  /** `text` with every secret replaced by its marker, and how many were replaced per rule. */
  async redactText(text: string, counts?: Map<string, number>): Promise<string> {
    const ranges = await this.find(text);
    if (ranges.length === 0) return text;
    let out = '';
    let at = 0;
    for (const r of ranges) {
      out += text.slice(at, r.start) + redactionMarker(r.rule);
      at = r.end;
      counts?.set(r.rule, (counts.get(r.rule) ?? 0) + 1);
    }
    return out + text.slice(at);
  }

  /**
   * The secrets in `text`, sorted and without overlaps (of two that overlap, the one starting
   * first, then the longer, is kept): the preset's findings, then the user's patterns'.
   */
  async find(text: string): Promise<DetectedRange[]> {
    const found: DetectedRange[] = [];
    if (this.options.preset === 'recommend' && text.length >= MIN_PRESET_LENGTH)
      found.push(...(await (await this.#detector())(text)));
    for (const { name, re } of this.#patterns) {
      re.lastIndex = 0;
      for (let m = re.exec(text); m !== null; m = re.exec(text)) {
        if (m[0] === '') re.lastIndex++;
        else found.push({ start: m.index, end: m.index + m[0].length, rule: name });
      }
    }
    found.sort((a, b) => a.start - b.start || b.end - a.end);
    const kept: DetectedRange[] = [];
    for (const r of found) if (kept.length === 0 || r.start >= kept[kept.length - 1]!.end) kept.push(r);
    return kept;
  }

  /** A copy of a JSON value with every string redacted (keys are kept as they are). */
  async redactJson(value: JsonValue, counts?: Map<string, number>, path = new Set<object>()): Promise<JsonValue> {
    if (typeof value === 'string') return this.redactText(value, counts);
    if (value === null || typeof value !== 'object') return value;
    // Only JSON's own shapes are rebuilt: anything else (a Date, a Map, a value that holds itself)
    // goes on as it is, for the node's validation to refuse (`NON_JSON_VALUE`) rather than be
    // turned into `{}` here, or walked forever.
    const proto = Object.getPrototypeOf(value);
    if (path.has(value) || (!Array.isArray(value) && proto !== Object.prototype && proto !== null)) return value;
    path.add(value);
    try {
      if (Array.isArray(value)) {
        const out: JsonValue[] = [];
        for (const v of value) out.push(await this.redactJson(v, counts, path));
        return out;
      }
      const out: { [key: string]: JsonValue } = {};
      for (const [k, v] of Object.entries(value)) out[k] = await this.redactJson(v, counts, path);
      return out;
    } finally {
      path.delete(value);
    }
  }

  /** A copy of a node with its content and metadata redacted; ids, roles, seq and times are kept. */
  async redactNode(node: DagNode): Promise<DagNode> {
    return { ...node, content: await this.redactJson(node.content), metadata: await this.redactJson(node.metadata) };
  }

  /** A copy of a session row with its title and metadata redacted. */
  async redactSession(session: Session): Promise<Session> {
    const title = session.title === null ? null : await this.redactText(session.title);
    return { ...session, title, metadata: await this.redactJson(session.metadata) };
  }

  #detector(): Promise<Detect> {
    this.#detect ??= import('./detector.js').then(
      (m) => m.detect,
      (err: unknown) => {
        this.#detect = null;
        throw new EntityGitError(
          'REDACTION_UNAVAILABLE',
          `the redaction preset 'recommend' cannot load here (${String(err)}): nothing was written`,
          {},
          { cause: err },
        );
      },
    );
    return this.#detect;
  }
}
