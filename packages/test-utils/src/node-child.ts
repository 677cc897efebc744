// A test's child process runs plain `node` on the built packages (dist/, which the integration
// project's global setup builds), not tsx on the sources: a start costs about 0.15 s instead of
// 0.6 s, which the crash suites pay once per step. The child script itself is TypeScript beside
// its test; it is transpiled here, file for file (types stripped, nothing bundled), into
// `test-output/` beside it, with the scripts it imports from its own folder.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';

type TypeScript = typeof import('typescript');
let ts: TypeScript | undefined;

/**
 * The JavaScript of the child script `file` (a `.ts` path) for `node` to run: its path, under
 * `test-output/` beside it. Imports of packages (`@entity-git/…`) resolve to their dist/; a
 * relative import must name a file of the same folder, which is transpiled with it.
 */
export function builtChild(file: string): string {
  ts ??= createRequire(import.meta.url)('typescript') as TypeScript;
  const out = join(dirname(file), 'test-output');
  mkdirSync(out, { recursive: true });
  const pending = [file];
  const done = new Set<string>();
  while (pending.length > 0) {
    const source = pending.pop()!;
    if (done.has(source)) continue;
    done.add(source);
    const text = readFileSync(source, 'utf8');
    const js = ts.transpileModule(text, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      fileName: source,
    }).outputText;
    for (const m of js.matchAll(/from '\.\/([^'/]+)\.js'/g)) {
      const sibling = join(dirname(source), `${m[1]}.ts`);
      if (existsSync(sibling)) pending.push(sibling);
    }
    const target = join(out, basename(source).replace(/\.ts$/, '.js'));
    // Test files build their children concurrently: each renames a whole file into place.
    const temp = `${target}.${process.pid}.tmp`;
    writeFileSync(temp, js);
    renameSync(temp, target);
  }
  return join(out, basename(file).replace(/\.ts$/, '.js'));
}
