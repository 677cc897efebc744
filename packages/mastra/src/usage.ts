import type { JsonValue } from '@entity-git/core';
import { isObject } from './stored-content.js';

/**
 * The tokens of the usage an application kept in a message's `content.metadata.usage` (what the
 * node's `metadata.tokens` holds, and the commit message's meta line sums), or null. Mastra itself
 * stores no usage on messages; an application that records a run's `usage` in the message's
 * metadata gets it in the mirror. Shapes read: the AI SDK v5 `{ inputTokens, outputTokens,
 * totalTokens }`, v4 `{ promptTokens, completionTokens, totalTokens }`, and `total_tokens`.
 */
export function tokensOf(metadata: JsonValue | undefined): number | null {
  if (!isObject(metadata) || !isObject(metadata.usage)) return null;
  const usage = metadata.usage;
  const n = (key: string): number | null => {
    const v = usage[key];
    return typeof v === 'number' && Number.isFinite(v) ? v : null;
  };
  const pair = (a: string, b: string): number | null => {
    const x = n(a);
    const y = n(b);
    return x === null && y === null ? null : (x ?? 0) + (y ?? 0);
  };
  return (
    n('totalTokens') ??
    n('total_tokens') ??
    pair('inputTokens', 'outputTokens') ??
    pair('promptTokens', 'completionTokens')
  );
}
