// Canonical JSON (docs/design.md, "Canonical JSON"): core's canonicalJsonBytes, what a sync frames
// each message with, against safe-stable-stringify written to the same format (keys by code point,
// strict, indent 2, a final LF), on the golden session's nodes and on 5,000 message nodes shaped
// like an import's (1–3 KB of text, metadata). Checks first that both give the same bytes on every
// input, then prints µs per node and the ratio. Run after `tsc -b`:
//   node bench/canonical-json.mjs
import { configure } from 'safe-stable-stringify';

const root = new URL('..', import.meta.url).pathname;
const { canonicalJsonBytes } = await import(`${root}packages/core/dist/index.js`);
const { goldenNodes } = await import(`${root}packages/test-utils/dist/index.js`);

const byCodePoint = (a, b) => {
  if (a === b) return 0;
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i].codePointAt(0) - y[i].codePointAt(0);
    if (d !== 0) return d;
  }
  return x.length - y.length;
};
const stringify = configure({ deterministic: byCodePoint, strict: true, circularValue: Error, bigint: false });
const encoder = new TextEncoder();
const libraryFramed = (node) => {
  const body = encoder.encode(`${stringify(node, null, 2)}\n`);
  const head = encoder.encode(`blob ${body.length}\0`);
  const out = new Uint8Array(head.length + body.length);
  out.set(head);
  out.set(body, head.length);
  return out;
};
const core = (node) => canonicalJsonBytes(node, (n) => `blob ${n}\0`);

let seed = 7;
const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
const ALPHABET = [...'abcdefghij klmnopqrstuvwxyz\n"é中🙂'];
const text = (n) => Array.from({ length: n }, () => ALPHABET[Math.floor(rand() * ALPHABET.length)]).join('');
const nodes = Array.from({ length: 5000 }, (_, i) => ({
  id: `m${i}`,
  session_id: 'bench',
  seq: i + 1,
  role: ['user', 'assistant', 'tool'][i % 3],
  content: text(1000 + Math.floor(rand() * 2000)),
  predecessor: i === 0 ? null : `m${i - 1}`,
  caller: i % 3 === 2 ? `m${i - 1}` : null,
  created_at: 1779500000 + i,
  metadata: i % 3 === 1 ? { model: 'claude', usage: { input_tokens: i, output_tokens: 2 * i }, tool_calls: [] } : null,
}));
const hard = [
  { '😀': 1, '～': 2, Z: 3, a: 4 },
  { lone: '\ud800', pair: '\ud83d\ude00', trail: '\udc00x' },
  { zero: -0, big: 1e21, small: 5e-324, max: Number.MAX_SAFE_INTEGER + 2 },
  { nested: [[], {}, [{}], { a: [] }], empty: {} },
  { 10: 'ten', 9: 'nine', b: 1, __proto__x: 2 },
];
let mismatches = 0;
for (const v of [...goldenNodes(), ...nodes.slice(0, 200), ...hard])
  if (Buffer.compare(Buffer.from(core(v)), Buffer.from(libraryFramed(v))) !== 0) {
    mismatches++;
    if (mismatches <= 3) console.log('differs:', JSON.stringify(v).slice(0, 120));
  }
console.log(`inputs compared: ${goldenNodes().length + 200 + hard.length}; differing bytes: ${mismatches}`);

function perNode(label, fn) {
  for (let r = 0; r < 2; r++) for (const n of nodes) fn(n); // warm-up
  const runs = [];
  for (let r = 0; r < 5; r++) {
    const start = performance.now();
    for (const n of nodes) fn(n);
    runs.push(((performance.now() - start) / nodes.length) * 1000);
  }
  const us = runs.sort((a, b) => a - b)[2];
  console.log(`${label.padEnd(36)} ${us.toFixed(2)} µs per node (median of 5 × 5,000)`);
  return us;
}
const ours = perNode('core canonicalJsonBytes', core);
const lib = perNode('safe-stable-stringify + encode', libraryFramed);
console.log(`safe-stable-stringify / core: ${(lib / ours).toFixed(2)}x`);
