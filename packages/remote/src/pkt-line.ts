import { fromUtf8, utf8 } from '@entity-git/git';

/** The length a pkt-line states in its first four bytes (hex), NaN when they are not one. */
const pktLen = (bytes: Uint8Array, at: number) => Number.parseInt(fromUtf8(bytes.subarray(at, at + 4)), 16);

/**
 * The v1 upload-pack advertisement `bytes` with `symref=HEAD:<target>` added to the capabilities
 * of its first ref line when it advertises no HEAD (and names no symref for it); unchanged
 * otherwise, and when it is not an advertisement this reads.
 */
export function addHeadSymref(bytes: Uint8Array, target: string): Uint8Array {
  let at = 0;
  const first = pktLen(bytes, 0);
  if (Number.isNaN(first)) return bytes;
  if (first > 4 && fromUtf8(bytes.subarray(4, 4 + Math.min(first - 4, 10))).startsWith('# service=')) {
    at = first;
    // the flush after the service line
    if (fromUtf8(bytes.subarray(at, at + 4)) === '0000') at += 4;
  }
  const len = pktLen(bytes, at);
  if (Number.isNaN(len) || len <= 4) return bytes;
  const line = fromUtf8(bytes.subarray(at + 4, at + len));
  const nul = line.indexOf('\0');
  if (nul < 0) return bytes;
  const name = line.slice(41, nul);
  const caps = line.slice(nul + 1).replace(/\n$/, '');
  if (name === 'HEAD' || /(^| )symref=HEAD:/.test(caps) || name === 'capabilities^{}') return bytes;
  const patched = utf8(`${line.slice(0, nul)}\0${caps} symref=HEAD:${target}\n`);
  const head = utf8((patched.length + 4).toString(16).padStart(4, '0'));
  const out = new Uint8Array(bytes.length - len + 4 + patched.length);
  out.set(bytes.subarray(0, at), 0);
  out.set(head, at);
  out.set(patched, at + 4);
  out.set(bytes.subarray(at + len), at + 4 + patched.length);
  return out;
}
