// The measured reasons behind the hand-written SHA-1 and zlib writers (packages/core/README.md,
// "Hand-written formats"), each against the libraries that could replace it, in one run:
// - SHA-1: @entity-git/git's `sha1Hex` against @noble/hashes' `sha1` (hex included) and sha.js
//   (isomorphic-git's);
// - stored blocks: `storedZlib` against fflate's `zlibSync` at level 0 (also stored) and pako's
//   deflate at level 1;
// - fixed-Huffman deflate: `fixedZlib` against fflate's `zlibSync` at level 1;
// on 2,000 inputs of 2 KB (message-like text), then the minified and gzipped size each adds to a
// bundle (esbuild, the one vite brings). Checks first that every output is what it claims (the
// same SHA-1; zlib streams that node:zlib inflates back). Ratios only; run after `tsc -b`:
//   node bench/hand-written.mjs
import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { gzipSync, inflateSync } from 'node:zlib';
import { bytesToHex } from '@noble/hashes/utils.js';
import { sha1 as nobleSha1 } from '@noble/hashes/legacy.js';
import { zlibSync } from 'fflate';

const root = fileURLToPath(new URL('..', import.meta.url));
// Resolved from isomorphic-git's real directory: sha.js and pako are its dependencies, not ours.
const isoRequire = createRequire(`${realpathSync(`${root}packages/git/node_modules/isomorphic-git`)}/index.js`);
const Sha1 = isoRequire('sha.js/sha1');
const pako = isoRequire('pako');
const { sha1Hex, storedZlib, fixedZlib } = await import(`${root}packages/git/dist/index.js`);

const words = ['the', 'session', 'tool', 'result', 'const', 'export', 'function', '{', '}', 'é', '中', '\n'];
const inputs = Array.from({ length: 2000 }, (_, i) => {
  let s = '';
  for (let j = 0; s.length < 2048; j++) s += `${words[(i * 7 + j * 13) % words.length]} `;
  return new TextEncoder().encode(s).subarray(0, 2048);
});

for (const b of inputs.slice(0, 50)) {
  const want = sha1Hex(b);
  if (bytesToHex(nobleSha1(b)) !== want || new Sha1().update(b).digest('hex') !== want)
    throw new Error('SHA-1s differ');
  for (const z of [storedZlib(b), fixedZlib(b), zlibSync(b, { level: 0 }), zlibSync(b, { level: 1 })])
    if (Buffer.compare(inflateSync(z), Buffer.from(b)) !== 0) throw new Error('a zlib stream does not inflate back');
}

/** µs per input of one pass of `fn` over every input. */
function pass(fn) {
  const start = performance.now();
  for (const b of inputs) fn(b);
  return ((performance.now() - start) / inputs.length) * 1000;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/**
 * Ours against each contender, interleaved pass by pass (ours first, then each contender, the
 * order turned every round), so machine noise falls on all alike: the median µs of each and the
 * median of the per-round ratios.
 */
function compare(what, ours, contenders) {
  const all = [ours, ...contenders];
  for (const [, fn] of all) for (let r = 0; r < 3; r++) pass(fn); // warm-up
  const times = all.map(() => []);
  for (let round = 0; round < 9; round++) {
    const order = all.map((_, i) => i);
    if (round % 2) order.reverse();
    for (const i of order) times[i].push(pass(all[i][1]));
  }
  console.log(`${what}: ${all.map(([label], i) => `${label} ${median(times[i]).toFixed(2)} µs`).join(', ')} per 2 KB`);
  for (let i = 1; i < all.length; i++) {
    const ratios = times[i].map((t, r) => t / times[0][r]);
    console.log(
      `  ${all[i][0]} / ${ours[0]}: ${median(ratios).toFixed(2)}x (rounds ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`,
    );
  }
}
compare(
  'SHA-1',
  ['core sha1Hex', (b) => sha1Hex(b)],
  [
    ['@noble/hashes sha1 + hex', (b) => bytesToHex(nobleSha1(b))],
    ['sha.js', (b) => new Sha1().update(b).digest('hex')],
  ],
);
compare(
  'stored blocks',
  ['core storedZlib', (b) => storedZlib(b)],
  [
    ['fflate zlibSync level 0', (b) => zlibSync(b, { level: 0 })],
    ['pako deflate level 1', (b) => pako.deflate(b, { level: 1 })],
  ],
);
compare(
  'fixed Huffman',
  ['core fixedZlib', (b) => fixedZlib(b)],
  [['fflate zlibSync level 1', (b) => zlibSync(b, { level: 1 })]],
);

// Bundle size: what each adds to a page, minified and gzipped (pako left out: core's codec needs
// it for inflate in any case).
const viteRequire = createRequire(`${realpathSync(`${root}node_modules/vite`)}/package.json`);
const esbuild = viteRequire('esbuild');
async function bundled(label, contents) {
  const out = await esbuild.build({
    stdin: { contents, resolveDir: root, loader: 'ts' },
    bundle: true,
    minify: true,
    format: 'esm',
    write: false,
    external: ['pako'],
  });
  const code = out.outputFiles[0].contents;
  console.log(
    `${label.padEnd(30)} ${(code.length / 1024).toFixed(1).padStart(5)} KB min, ${(gzipSync(code).length / 1024).toFixed(1).padStart(4)} KB gzip`,
  );
}
await bundled('core sha1', `export { sha1 } from './packages/git/src/codec/sha1.ts';`);
await bundled(
  '@noble/hashes sha1 + hex',
  `export { sha1 } from '@noble/hashes/legacy.js'; export { bytesToHex } from '@noble/hashes/utils.js';`,
);
await bundled('core storedZlib', `export { storedZlib } from './packages/git/src/codec/codec.ts';`);
await bundled('core fixedZlib', `export { fixedZlib } from './packages/git/src/codec/fixed-deflate.ts';`);
await bundled('fflate zlibSync', `export { zlibSync } from 'fflate';`);
