// The measured reasons behind two hand-written formats (packages/core/README.md, "Hand-written
// formats"): core's SHA-1 against sha.js (isomorphic-git's), and a zlib stream of stored blocks
// against pako's deflate at level 1, on 2,000 inputs of 2 KB. Ratios only; run after `tsc -b`:
//   node bench/hand-written.mjs
import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
// Resolved from isomorphic-git's real directory: sha.js is its dependency, not ours.
const require = createRequire(`${realpathSync(`${root}packages/core/node_modules/isomorphic-git`)}/index.js`);
const Sha1 = require('sha.js/sha1');
const pako = require('pako');
const { sha1Hex, storedZlib } = await import(`${root}packages/core/dist/index.js`);

const inputs = Array.from({ length: 2000 }, (_, i) => {
  const b = new Uint8Array(2048);
  for (let j = 0; j < b.length; j++) b[j] = (i * 31 + j * 7) & 0xff;
  return b;
});
function perInput(label, fn) {
  for (let r = 0; r < 3; r++) for (const b of inputs) fn(b); // warm-up
  const start = performance.now();
  for (let r = 0; r < 5; r++) for (const b of inputs) fn(b);
  const us = ((performance.now() - start) / (5 * inputs.length)) * 1000;
  console.log(`${label.padEnd(24)} ${us.toFixed(1)} µs per 2 KB`);
  return us;
}
const ours = perInput('core sha1', (b) => sha1Hex(b));
const shaJs = perInput('sha.js', (b) => new Sha1().update(b).digest('hex'));
const stored = perInput('storedZlib', (b) => storedZlib(b));
const deflate = perInput('pako deflate, level 1', (b) => pako.deflate(b, { level: 1 }));
console.log(
  `sha.js / core sha1: ${(shaJs / ours).toFixed(2)}x; pako level 1 / stored: ${(deflate / stored).toFixed(1)}x`,
);
