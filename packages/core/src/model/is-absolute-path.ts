/** POSIX absolute (`/…`) or Windows absolute (`C:\…`, `\\server\…`). */
export function isAbsolutePath(p: string): boolean {
  return p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p) || p.startsWith('\\\\');
}
