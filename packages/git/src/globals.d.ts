// This package runs in Node and in the browser and may use neither `node:*` nor the DOM, so it declares
// the few web-standard globals it relies on (present in Node >= 18 and in every browser).
declare class TextEncoder {
  encode(input?: string): Uint8Array;
  encodeInto(input: string, destination: Uint8Array): { read: number; written: number };
}
declare class TextDecoder {
  constructor(label?: string, options?: { fatal?: boolean });
  decode(input?: Uint8Array): string;
}
declare function setTimeout(handler: () => void, timeout?: number): unknown;
declare function clearTimeout(id: unknown): void;
