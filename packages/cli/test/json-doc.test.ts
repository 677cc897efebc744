import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { COMMAND_HELP, TOP_HELP } from '../src/help.js';

const doc = readFileSync(fileURLToPath(new URL('../../../docs/cli-json.md', import.meta.url)), 'utf8');
const index = readFileSync(fileURLToPath(new URL('../src/index.ts', import.meta.url)), 'utf8');
const headings = doc.split('\n').filter((l) => l.startsWith('## '));

/** The command words of every usage line that offers `--json`: `sync`, `projects diff`, … */
function jsonCommands(): string[] {
  const found = new Set<string>();
  for (const text of [TOP_HELP, ...Object.values(COMMAND_HELP)])
    for (const line of text.split('\n')) {
      const m = /entity-git ((?:[a-z][a-z-]*)(?: [a-z][a-z-]*)*)\b.*\[--json\]/.exec(line);
      if (m?.[1]) found.add(m[1]);
    }
  return [...found].sort();
}

describe('docs/cli-json.md', () => {
  it('has a section for every command that prints --json', () => {
    const commands = jsonCommands();
    expect(commands).toContain('sync');
    expect(commands).toContain('projects diff');
    const missing = commands.filter((c) => !headings.some((h) => h.includes(`\`${c} `) || h.includes(`\`${c}\``)));
    expect(missing).toEqual([]);
  });

  it('names every JSON type the package exports', () => {
    const types = [...index.matchAll(/\b([A-Z][A-Za-z]*Json)\b/g)].map((m) => m[1] as string);
    expect(types.length).toBeGreaterThan(10);
    const top = ['SyncJson', 'VerifyJson', 'ScanJson', 'RestoreJson', 'ImportJson', 'ProjectLogJson'];
    for (const t of top) expect(types).toContain(t);
    const named = new Set([...doc.matchAll(/`([A-Z][A-Za-z]*Json)`/g)].map((m) => m[1]));
    const documentedTop = types.filter(
      (t) =>
        !/^(Commit|Branch|Project|Difference|Error|Import(Session|Warning|Failure|Summary)|ProjectCommit)Json$/.test(t),
    );
    expect(documentedTop.filter((t) => !named.has(t))).toEqual([]);
  });
});
