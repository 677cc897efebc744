const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export function toHex(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i++) s += HEX[bytes[i]!];
  return s;
}

const nibble = (c: number): number => (c <= 57 ? c - 48 : (c | 32) - 87);

export function fromHex(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length >> 1);
  hexInto(hex, out, 0);
  return out;
}

/** {@link fromHex} written into `out` at `at`, with no array of its own (a pack index writes thousands). */
export function hexInto(hex: string, out: Uint8Array, at: number): void {
  for (let i = 0, n = hex.length >> 1; i < n; i++)
    out[at + i] = (nibble(hex.charCodeAt(2 * i)) << 4) | nibble(hex.charCodeAt(2 * i + 1));
}
