// Lists the functions of `packages/*/src` longer than a limit (CONTRIBUTING's function-size rule):
// declarations, methods, constructors, accessors, arrows and function expressions, each counted
// from its first line to its last less the lines of the functions inside it (an inner function
// counts on its own; a class is no function, its methods count one by one). Longest first; exits
// 0 either way.
//
//   node scripts/long-functions.mjs [limit=80]
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import ts from 'typescript';

const limit = Number(process.argv[2] ?? 80);
const root = new URL('..', import.meta.url).pathname;
const files = execFileSync('git', ['ls-files', 'packages/*/src/**.ts'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f !== '' && !f.endsWith('.d.ts'));

const isFunction = (node) =>
  ts.isFunctionDeclaration(node) ||
  ts.isMethodDeclaration(node) ||
  ts.isConstructorDeclaration(node) ||
  ts.isGetAccessor(node) ||
  ts.isSetAccessor(node) ||
  ts.isArrowFunction(node) ||
  ts.isFunctionExpression(node);

function nameOf(node) {
  if (node.name !== undefined) return node.name.getText();
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) return parent.name.getText();
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  return '(anonymous)';
}

const long = [];
for (const file of files) {
  const source = ts.createSourceFile(file, readFileSync(`${root}${file}`, 'utf8'), ts.ScriptTarget.Latest, true);
  const line = (pos) => source.getLineAndCharacterOfPosition(pos).line + 1;
  const span = (node) => line(node.getEnd()) - line(node.getStart()) + 1;
  // The lines of the outermost functions inside `node`.
  const innerLines = (node) => {
    let n = 0;
    const walk = (child) => {
      if (isFunction(child)) n += span(child);
      else ts.forEachChild(child, walk);
    };
    ts.forEachChild(node, walk);
    return n;
  };
  const visit = (node) => {
    if (isFunction(node)) {
      const first = line(node.getStart());
      const lines = line(node.getEnd()) - first + 1 - innerLines(node);
      if (lines > limit) long.push({ file, first, lines, name: nameOf(node) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
long.sort((a, b) => b.lines - a.lines);
for (const f of long) console.log(`${f.lines}\t${f.file}:${f.first}\t${f.name}`);
console.log(`${long.length} function(s) over ${limit} lines in packages/*/src`);
