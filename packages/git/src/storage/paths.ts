let counter = 0;
/** A name no other writer picks: random, plus a per-process counter. */
export function uniqueSuffix(): string {
  counter = (counter + 1) % 1e9;
  return `${Math.random().toString(36).slice(2, 10)}${counter.toString(36)}`;
}

export function joinPath(...parts: string[]): string {
  return parts.join('/').replace(/\/{2,}/g, '/');
}

export function dirname(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}
