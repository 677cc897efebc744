// What every bench shares: summaries of samples, native git as the judge of a repository, the
// figures' formats, and the results file each bench writes under bench/out/.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';

function quantile(sorted: number[], q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/** Median, p90, min and max of the samples (which are kept). */
export const stats = (samples: number[]) => {
  const s = [...samples].sort((a, b) => a - b);
  return { median: quantile(s, 0.5), p90: quantile(s, 0.9), min: s[0]!, max: s.at(-1)!, samples };
};
export type Stats = ReturnType<typeof stats>;

/** Native git's output (stdout), failing on a non-zero exit. */
export const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 28 });

/** A bench's failure: throws `<bench> bench: <message>` (a bench stops on a broken repository). */
export const failWith =
  (bench: string) =>
  (message: string): never => {
    throw new Error(`${bench} bench: ${message}`);
  };

/** `git fsck --strict` in `dir`, failing through `fail` when it finds anything (warnings, exit 0, count too). */
export function fsckOr(fail: (message: string) => never, dir: string): void {
  const problems = fsckProblems(dir);
  if (problems !== null) fail(problems);
}

/** Rows of cells as columns: the first two left-aligned (names), the others right-aligned (figures). */
export function align(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows
    .map((row) => row.map((cell, i) => (i <= 1 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('   '))
    .join('\n');
}

/** `git fsck --strict` in `dir`: what it said when it found anything (warnings, exit 0, count too), else null. */
export function fsckProblems(dir: string): string | null {
  const r = spawnSync('git', ['fsck', '--strict', '--no-dangling'], { cwd: dir, encoding: 'utf8' });
  const said = `${r.stdout}${r.stderr}`
    .split('\n')
    .filter((l) => l.trim() !== '' && !/^(Checking|Verifying)/.test(l))
    .join('\n');
  return r.status !== 0 || said !== '' ? `git fsck --strict in ${dir} failed (exit ${r.status}):\n${said}` : null;
}

/** Bytes of the files under `dir`, recursively (what `du` would count, less block rounding). */
export function bytesUnder(dir: string): number {
  const r = spawnSync('du', ['-sb', dir], { encoding: 'utf8' });
  return Number(r.stdout.split('\t')[0]);
}

export const ms = (x: number) => x.toFixed(x < 10 ? 2 : 1);
export const ratio = (x: number) => `${x.toFixed(2)}x`;
export const int = (x: number) => x.toLocaleString('en-US');
export const mb = (x: number) => `${(x / 1e6).toFixed(1)} MB`;

/** Write `bench/out/<name>.json` (git-ignored) and say where. */
export function writeResults(name: string, data: Record<string, unknown>): void {
  const outDir = new URL('../out/', import.meta.url);
  mkdirSync(outDir, { recursive: true });
  const out = new URL(`${name}.json`, outDir);
  writeFileSync(out, `${JSON.stringify({ bench: name, date: new Date().toISOString(), ...data }, null, 2)}\n`);
  console.log(`results: ${out.pathname}`);
}
