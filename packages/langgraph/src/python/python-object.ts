/**
 * A value of a Python type this package does not read, kept as the data Python stored for it:
 * what its constructor was given (one argument, a list of them, keyword arguments or a model's
 * dict). In JSON — a node's content or metadata — it is `{ python_type: "module.Name", value }`,
 * so the type is not lost with the object.
 */
export class PythonObject {
  /** The type's module (`myapp.models`). */
  readonly module: string;
  /** The type's name (`Weather`). */
  readonly name: string;
  /** What Python stored to rebuild it, decoded. */
  readonly value: unknown;

  constructor(module: string, name: string, value: unknown) {
    this.module = module;
    this.name = name;
    this.value = value;
  }

  /** `module.Name`. */
  get type(): string {
    return this.module === '' ? this.name : `${this.module}.${this.name}`;
  }

  toJSON(): { python_type: string; value: unknown } {
    return { python_type: this.type, value: this.value };
  }
}

/** How Python said to rebuild an object: the msgpack extension codes 0–5, or a JSON `lc` constructor. */
export interface Construction {
  module: string;
  name: string;
  /** Code 0 and 3: the one argument. */
  arg?: unknown;
  /** Code 1 (and a JSON constructor's `args`): the arguments. */
  args?: unknown[];
  /** Code 2, 4, 5 (and a JSON constructor's `kwargs`): the keyword arguments or the model's dict. */
  kwargs?: Record<string, unknown>;
  /** Code 3 and 5: the class method called (`fromisoformat`, `model_validate_json`). */
  method?: string;
}

/** LangChain's message types by `type` field, as `readMessage` knows them (Python's `chat` is JS's `generic`). */
const MESSAGE_TYPES: Readonly<Record<string, string>> = {
  human: 'human',
  ai: 'ai',
  tool: 'tool',
  system: 'system',
  function: 'function',
  remove: 'remove',
  developer: 'developer',
  chat: 'generic',
  HumanMessageChunk: 'human',
  AIMessageChunk: 'ai',
  ToolMessageChunk: 'tool',
  SystemMessageChunk: 'system',
  FunctionMessageChunk: 'function',
  ChatMessageChunk: 'generic',
};

/**
 * The value Python's constructor call stands for, built from data only: no module is imported,
 * no code looked up. LangChain messages (any model whose dict has a message `type` and `content`,
 * subclasses included) become plain message objects; the standard library's value types become
 * their JSON counterparts (a datetime its ISO text, a UUID or Decimal its text, a set a list); any
 * other type is a {@link PythonObject}, reported through `unknown`.
 */
export function construct(c: Construction, unknown: (o: PythonObject) => void): unknown {
  const message = asMessage(c.kwargs);
  if (message !== null) return message;
  const type = `${c.module}.${c.name}`;
  const first = c.arg !== undefined ? c.arg : c.args?.[0];
  switch (type) {
    case 'datetime.datetime':
    case 'datetime.date':
    case 'datetime.time':
      if (typeof first === 'string') return first;
      break;
    case 'uuid.UUID':
      if (typeof first === 'string') return uuidText(first);
      break;
    case 'pathlib.Path':
    case 'pathlib.PosixPath':
    case 'pathlib.WindowsPath':
    case 'pathlib.PurePosixPath':
    case 'pathlib.PureWindowsPath':
      // Stored as the path's `parts`: ('/', 'tmp', 'x.txt').
      if (c.args?.every((a) => typeof a === 'string')) return joinParts(c.args as string[]);
      if (typeof first === 'string') return first;
      break;
    case 'decimal.Decimal':
    case 'zoneinfo.ZoneInfo':
    case 'ipaddress.IPv4Address':
    case 'ipaddress.IPv6Address':
      if (typeof first === 'string') return first;
      break;
    case 'builtins.set':
    case 'builtins.frozenset':
    case 'builtins.tuple':
    case 'builtins.list':
    case 'collections.deque':
      if (Array.isArray(first)) return first;
      if (first === undefined) return [];
      break;
  }
  const o = new PythonObject(c.module, c.name, c.kwargs ?? c.args ?? c.arg ?? null);
  unknown(o);
  return o;
}

function asMessage(dict: Record<string, unknown> | undefined): Record<string, unknown> | null {
  if (dict === undefined || dict === null || typeof dict !== 'object' || !('content' in dict)) return null;
  const type = typeof dict.type === 'string' ? MESSAGE_TYPES[dict.type] : undefined;
  return type === undefined ? null : { ...dict, type };
}

function joinParts(parts: string[]): string {
  return parts.reduce((path, part) => (path === '' || /[\\/]$/.test(path) ? path + part : `${path}/${part}`), '');
}

/** Python's `UUID.hex` (32 digits) as the dashed form `str(uuid)` gives. */
function uuidText(hex: string): string {
  if (!/^[0-9a-f]{32}$/i.test(hex)) return hex;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
