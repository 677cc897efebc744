// Lists the functions of `packages/*/src` with many positional parameters (CONTRIBUTING's
// options-object rule): declarations, methods, constructors, arrows, function expressions, method
// signatures and function types, each with its parameter count. Exits 0 either way.
//
//   node scripts/many-params.mjs [min=5]
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import ts from 'typescript';

const min = Number(process.argv[2] ?? 5);
const root = new URL('..', import.meta.url).pathname;
const files = execFileSync('git', ['ls-files', 'packages/*/src/**.ts'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f !== '' && !f.endsWith('.d.ts') && existsSync(`${root}${f}`));

const isFunction = (node) =>
  ts.isFunctionDeclaration(node) ||
  ts.isMethodDeclaration(node) ||
  ts.isConstructorDeclaration(node) ||
  ts.isArrowFunction(node) ||
  ts.isFunctionExpression(node) ||
  ts.isMethodSignature(node) ||
  ts.isFunctionTypeNode(node);

function nameOf(node) {
  if (node.name !== undefined) return node.name.getText();
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertySignature(parent))
    return parent.name.getText();
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  return '(anonymous)';
}

const found = [];
for (const file of files) {
  const source = ts.createSourceFile(file, readFileSync(`${root}${file}`, 'utf8'), ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (isFunction(node) && node.parameters.length >= min) {
      const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      found.push({ file, line, count: node.parameters.length, name: nameOf(node) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
found.sort((a, b) => b.count - a.count || a.file.localeCompare(b.file) || a.line - b.line);
for (const f of found) console.log(`${f.count}\t${f.file}:${f.line}\t${f.name}`);
console.log(`${found.length} function(s) with ${min} or more parameters in packages/*/src`);
