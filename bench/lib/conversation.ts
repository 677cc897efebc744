// The deterministic conversation every bench measures: same seed, same bytes, same blob ids on
// every run and machine. A turn is 5 messages of 1–3 KB: user, assistant calling two tools, the
// two results, the reply.
import type { DagNode } from '../../packages/core/src/index.js';

export const TURN_FILES = 5;
export const BASE_TIME = 1779500000;

export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const WORDS = (
  'the a of to in and is that for it with as on be this are by file function return value ' +
  'test error module config string number array object type import export const let async await ' +
  'promise branch commit tree blob index session message turn tool call result agent user reply ' +
  'change update remove add check build run path directory source package version cache lock ' +
  'write read parse format output input request response server client handler option default'
).split(' ');
export const IDENTS = [
  'parseTree',
  'buildIndex',
  'readFile',
  'syncSession',
  'resolveRef',
  'writeObject',
  'config',
  'entries',
  'oid',
  'mode',
];

export class Text {
  private readonly r: () => number;
  constructor(seed: number) {
    this.r = mulberry32(seed);
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.r() * (hi - lo + 1));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.r() * xs.length)]!;
  }
  hex(n: number): string {
    let s = '';
    while (s.length < n) s += this.int(0, 15).toString(16);
    return s;
  }
  /** Prose of about `len` characters: sentences, an occasional paragraph break. */
  prose(len: number): string {
    let out = '';
    while (out.length < len) {
      const words = Array.from({ length: this.int(6, 18) }, () => this.pick(WORDS));
      words[0] = words[0]!.charAt(0).toUpperCase() + words[0]!.slice(1);
      out += words.join(' ') + (this.r() < 0.15 ? '.\n\n' : '. ');
    }
    return out.trimEnd();
  }
  /** Source-like lines, as a `read` tool returns them. */
  code(len: number): string {
    const lines: string[] = [];
    let size = 0;
    for (let i = 1; size < len; i++) {
      const line = `${String(i).padStart(4)}  ${' '.repeat(2 * this.int(0, 3))}const ${this.pick(IDENTS)}${this.int(0, 99)} = ${this.pick(IDENTS)}(${this.pick(WORDS)}, ${this.int(0, 4096)}); // ${this.pick(WORDS)} ${this.pick(WORDS)}`;
      lines.push(line);
      size += line.length + 1;
    }
    return lines.join('\n');
  }
  /** `grep -n` output. */
  grep(len: number): string {
    const lines: string[] = [];
    let size = 0;
    while (size < len) {
      const line = `src/${this.pick(WORDS)}/${this.pick(IDENTS)}.ts:${this.int(1, 900)}:  ${this.pick(IDENTS)}(${this.pick(WORDS)}) // TODO ${this.prose(30)}`;
      lines.push(line);
      size += line.length + 1;
    }
    return lines.join('\n');
  }
  size(): number {
    return this.int(1000, 3000);
  }
}

/** A session as an agent writes it: user, assistant calling two tools, the two results, the reply. */
/**
 * Turns of a user message and a reply of ~330 characters each (the small sessions of
 * many-sessions and disk-size), seq `from + 1` on, node ids `<sessionId>-n<seq>`, text from `seed`.
 */
export function replyTurns(sessionId: string, seed: number, turns: number, from = 0): DagNode[] {
  const text = new Text(seed);
  const out: DagNode[] = [];
  let prev: string | null = from === 0 ? null : `${sessionId}-n${from}`;
  for (let k = from + 1; k <= from + 2 * turns; k++) {
    const id = `${sessionId}-n${k}`;
    out.push({
      id,
      session_id: sessionId,
      seq: k,
      role: k % 2 === 1 ? 'user' : 'assistant',
      content: text.prose(330),
      predecessor: prev,
      caller: null,
      created_at: BASE_TIME + k,
      metadata: null,
    });
    prev = id;
  }
  return out;
}

export class Conversation {
  private readonly text: Text;
  private seq = 0;
  private last: string | null = null;
  constructor(
    readonly sessionId: string,
    seed: number,
  ) {
    this.text = new Text(seed);
  }

  turn(): DagNode[] {
    const t = this.text;
    const node = (role: DagNode['role'], content: DagNode['content'], extra: Partial<DagNode> = {}): DagNode => {
      this.seq++;
      const n: DagNode = {
        id: `msg_${String(this.seq).padStart(6, '0')}${t.hex(10)}`,
        session_id: this.sessionId,
        seq: this.seq,
        role,
        content,
        predecessor: this.last,
        caller: null,
        created_at: BASE_TIME + 7 * this.seq,
        metadata: null,
        ...extra,
      };
      this.last = n.id;
      return n;
    };
    const user = node('user', t.prose(t.size()));
    const path = `src/${t.pick(WORDS)}/${t.pick(IDENTS)}.ts`;
    const call = node(
      'assistant',
      {
        text: t.prose(t.size() - 200),
        tool_calls: [
          { id: `call_${t.hex(16)}`, name: 'read', arguments: { path } },
          { id: `call_${t.hex(16)}`, name: 'grep', arguments: { pattern: 'TODO', path: 'src' } },
        ],
      },
      { metadata: { tokens: t.int(200, 2000) } },
    );
    // Parallel results share the calling assistant as predecessor; the reply follows the last one.
    const read = node('tool', t.code(t.size()), { predecessor: call.id, caller: call.id, metadata: { tool: 'read' } });
    const grep = node('tool', t.grep(t.size()), { predecessor: call.id, caller: call.id, metadata: { tool: 'grep' } });
    const reply = node('assistant', t.prose(t.size()), { metadata: { tokens: t.int(200, 2000) } });
    return [user, call, read, grep, reply];
  }
}
