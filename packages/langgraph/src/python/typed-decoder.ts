import { decode, ExtensionCodec } from '@msgpack/msgpack';
import { EntityGitError } from '@entity-git/core';
import { construct, PythonObject, type Construction } from './python-object.js';

/**
 * The msgpack extension codes of LangGraph's serializer (`langgraph.checkpoint.serde.jsonplus`):
 * each payload is itself msgpack, `(module, name, …)` as below.
 */
const EXT_CONSTRUCTOR_SINGLE_ARG = 0; // (module, name, arg)
const EXT_CONSTRUCTOR_POS_ARGS = 1; // (module, name, [args])
const EXT_CONSTRUCTOR_KW_ARGS = 2; // (module, name, {kwargs})
// 3 = EXT_METHOD_SINGLE_ARG: (module, name, arg, method), e.g. datetime's `fromisoformat`.
const EXT_PYDANTIC_V1 = 4; // (module, name, dict)
const EXT_PYDANTIC_V2 = 5; // (module, name, dict, method)

export interface TypedDecoderOptions {
  /**
   * Called once per Python type the decoder cannot read, when a message holds a value of it (the
   * value is kept as a {@link PythonObject}; the message names the type in `python_types`).
   */
  onUnknownType?: (type: string) => void;
}

/**
 * Reads the `(type, bytes)` values LangGraph's savers store — Python's and LangGraph.js's alike:
 *
 * - `msgpack` (Python's default): objects are extension types 0–5 whose payloads name a module,
 *   a class and its data; they are rebuilt from data alone ({@link construct}), never by
 *   importing or evaluating anything;
 * - `json` (Python's fallback, and every value LangGraph.js writes): `lc` constructor objects —
 *   LangChain's `{ lc: 1 }` messages are left for `readMessage`, which reads them, and Python's
 *   `{ lc: 2 }` objects are rebuilt like the extension types;
 * - `bytes` / `bytearray`: the bytes; `null`: null; `empty` (a PostgreSQL channel without a
 *   value): undefined.
 *
 * A message that holds a value of an unknown type gets `python_types` (the sorted `module.Name`s),
 * which `readMessage` keeps in the node's metadata. Pure: no Node API, so it runs in browsers.
 */
export class TypedDecoder {
  readonly #codec = new ExtensionCodec();
  readonly #warned = new Set<string>();
  /** The unknown types met inside each object being rebuilt, innermost last. */
  readonly #met: Set<string>[] = [];
  readonly #onUnknownType: ((type: string) => void) | undefined;

  constructor(options: TypedDecoderOptions = {}) {
    this.#onUnknownType = options.onUnknownType;
    for (let code = EXT_CONSTRUCTOR_SINGLE_ARG; code <= EXT_PYDANTIC_V2; code++) {
      this.#codec.register({ type: code, encode: () => null, decode: (data) => this.#extension(code, data) });
    }
  }

  /** Every unknown type a message held so far, `module.Name`, in the order first met. */
  get unknownTypes(): string[] {
    return [...this.#warned];
  }

  /** One stored value. `INVALID_NODE` for bytes that do not decode or a serialisation type not listed above. */
  decode(type: string, data: Uint8Array | string | null | undefined): unknown {
    try {
      switch (type) {
        case 'msgpack':
          return this.#rebuild(() => decode(bytesOf(data), { extensionCodec: this.#codec }));
        case 'json':
          return this.#rebuild(() => this.#revive(JSON.parse(textOf(data))));
        case 'bytes':
        case 'bytearray':
          return bytesOf(data);
        case 'null':
          return null;
        case 'empty':
          return undefined;
      }
    } catch (cause) {
      if (cause instanceof EntityGitError) throw cause;
      throw new EntityGitError(
        'INVALID_NODE',
        `[langgraph] a stored ${JSON.stringify(type)} value does not decode: ${(cause as Error).message}`,
        { type },
        { cause },
      );
    }
    throw new EntityGitError('INVALID_NODE', `[langgraph] values serialised as ${JSON.stringify(type)} are not read`, {
      type,
    });
  }

  #rebuild(run: () => unknown): unknown {
    this.#met.length = 0;
    this.#met.push(new Set());
    try {
      return run();
    } finally {
      this.#met.length = 0;
    }
  }

  #extension(code: number, data: Uint8Array): unknown {
    this.#met.push(new Set());
    let parts: unknown;
    let inner: Set<string>;
    try {
      parts = decode(data, { extensionCodec: this.#codec });
    } finally {
      inner = this.#met.pop()!;
    }
    if (!Array.isArray(parts) || typeof parts[0] !== 'string' || typeof parts[1] !== 'string')
      throw new EntityGitError(
        'INVALID_NODE',
        `[langgraph] msgpack extension ${code} does not name a module and a class`,
      );
    const [module, name, payload, method] = parts as [string, string, unknown, unknown];
    const c: Construction = { module, name };
    if (code === EXT_CONSTRUCTOR_POS_ARGS) c.args = Array.isArray(payload) ? payload : [payload];
    else if (code === EXT_CONSTRUCTOR_KW_ARGS || code === EXT_PYDANTIC_V1 || code === EXT_PYDANTIC_V2)
      c.kwargs = isRecord(payload) ? payload : {};
    else c.arg = payload; // EXT_CONSTRUCTOR_SINGLE_ARG, EXT_METHOD_SINGLE_ARG
    if (typeof method === 'string') c.method = method;
    return this.#built(c, inner);
  }

  /** JSON with Python's `{ lc: 2, type: 'constructor' }` objects rebuilt, depth first. */
  #revive(value: unknown): unknown {
    if (Array.isArray(value)) return value.map((v) => this.#revive(v));
    if (!isRecord(value)) return value;
    const out: Record<string, unknown> = {};
    this.#met.push(new Set());
    let inner: Set<string>;
    try {
      for (const [k, v] of Object.entries(value)) out[k] = this.#revive(v);
    } finally {
      inner = this.#met.pop()!;
    }
    if (out.type === 'constructor' && Array.isArray(out.id) && out.id.length > 0) {
      // LangChain's own message form: `readMessage` reads its kwargs.
      if (out.lc === 1 && inner.size > 0 && isRecord(out.kwargs))
        return { ...out, kwargs: this.#kept(out.kwargs, inner) };
      if (out.lc === 2) {
        const id = out.id.map(String);
        const c: Construction = { module: id.slice(0, -1).join('.'), name: id.at(-1)! };
        if (Array.isArray(out.args)) c.args = out.args;
        if (isRecord(out.kwargs)) c.kwargs = out.kwargs;
        if (typeof out.method === 'string') c.method = out.method;
        return this.#built(c, inner);
      }
    }
    this.#up(inner);
    return out;
  }

  /**
   * The object rebuilt from `c`, whose data met the unknown types `inner`: a message keeps them
   * (`python_types`); anything else hands them, and its own type when unknown, to its container.
   */
  #built(c: Construction, inner: Set<string>): unknown {
    const value = construct(c, (o: PythonObject) => inner.add(o.type));
    if (isRecord(value) && !(value instanceof PythonObject) && inner.size > 0) return this.#kept(value, inner);
    this.#up(inner);
    return value;
  }

  /** A message holding values of unknown types: it names them, and each is reported the first time. */
  #kept(message: Record<string, unknown>, types: Set<string>): Record<string, unknown> {
    for (const t of types) {
      if (this.#warned.has(t)) continue;
      this.#warned.add(t);
      this.#onUnknownType?.(t);
    }
    return { ...message, python_types: [...types].sort() };
  }

  #up(types: Set<string>): void {
    const parent = this.#met.at(-1);
    if (parent !== undefined) for (const t of types) parent.add(t);
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !ArrayBuffer.isView(v);
}

function bytesOf(data: Uint8Array | string | null | undefined): Uint8Array {
  if (data instanceof Uint8Array) return data;
  if (typeof data === 'string') return new TextEncoder().encode(data);
  return new Uint8Array(0);
}

function textOf(data: Uint8Array | string | null | undefined): string {
  if (typeof data === 'string') return data;
  return new TextDecoder('utf-8', { fatal: true }).decode(bytesOf(data));
}
