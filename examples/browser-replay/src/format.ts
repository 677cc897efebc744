// Small formatting helpers and the app's routes, shared by its views.
import { textOf, type JsonValue } from '@entity-git/core';

const enc = encodeURIComponent;
export const sessionHref = (id: string, sha?: string, branch?: string) =>
  `#/s/${enc(id)}${sha ? `/c/${sha}${branch ? `/${enc(branch)}` : ''}` : ''}`;
export const projectHref = (id: string) => `#/p/${enc(id)}`;
export const short = (sha: string | null | undefined) => (sha ? sha.slice(0, 7) : '—');
export const when = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 16).replace('T', ' ');
export const plural = (n: number, one: string) =>
  `${n} ${one}${n === 1 ? '' : /(?:s|sh|ch|x)$/.test(one) ? 'es' : 's'}`;

/** `/home/ada/code/wiki-agent` → `…/code/wiki-agent`. */
export function abbreviate(workdir: string): string {
  const parts = workdir.split(/[\\/]/).filter((p) => p !== '');
  return parts.length <= 2 ? workdir : `…/${parts.slice(-2).join('/')}`;
}

export function contentText(content: JsonValue): string {
  const text = textOf(content);
  return text !== '' ? text : JSON.stringify(content, null, 2);
}

export function toolCalls(content: JsonValue): string[] {
  if (content === null || typeof content !== 'object' || Array.isArray(content)) return [];
  const calls = (content as { tool_calls?: unknown }).tool_calls;
  return Array.isArray(calls) ? calls.map((c) => String((c as { name?: unknown })?.name ?? 'tool')) : [];
}
