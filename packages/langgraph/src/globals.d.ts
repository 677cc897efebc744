// The package runs in Node and in the browser and may use neither `node:*` (but in the SQL openers,
// loaded on demand) nor the DOM, so it declares the web-standard globals it relies on.
declare class TextEncoder {
  encode(input?: string): Uint8Array;
}
declare class TextDecoder {
  constructor(label?: string, options?: { fatal?: boolean });
  decode(input?: Uint8Array): string;
}
