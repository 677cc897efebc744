import {
  type AfterTurnInput,
  createMirrorService,
  foldLine,
  type JsonValue,
  MemoryDag,
  type ProjectGit,
  textOf,
} from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { createNodeProjectGit } from '@entity-git/project/node';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, tempDir, userRepo } from './helpers.js';

// First lines longer than the 60 code points of a subject, whitespace runs, tabs, CR, U+2028,
// CJK and emoji, text parts and a `.text` object: what the session commit's subject cannot hold.
const MESSAGES: JsonValue[] = [
  'Refactor the parser so that it never drops the last token when a line ends in a backslash\n\nand add\ttests',
  [
    {
      type: 'text',
      text: '修复词法分析器：行尾的反斜杠会吞掉最后一个记号 🙂🙂🙂 —   keep   the spacing\r\nsecond line',
    },
    { type: 'image', url: 'https://example.invalid/x.png' },
    { type: 'text', text: 'and a second text part\u2028after a line separator' },
  ],
  { text: 'turn 9: a message that itself starts like a subject, and runs on well past sixty code points' },
];

/** The project git, recording every `afterTurn` input on its way through. */
function spied(inner: ProjectGit): { projectGit: ProjectGit; inputs: AfterTurnInput[] } {
  const inputs: AfterTurnInput[] = [];
  const projectGit: ProjectGit = {
    ...inner,
    beforeTurn: (workdir) => inner.beforeTurn(workdir),
    afterTurn: (input) => {
      inputs.push(input);
      return inner.afterTurn(input);
    },
  };
  return { projectGit, inputs };
}

async function session(withDag: boolean) {
  const workdir = userRepo();
  const dag = new MemoryDag();
  await dag.createSession({ id: 'sess', model: 'm', created_at: 1779500000 });
  const project = await dag.createProject({ name: 'P', workdir });
  await dag.addSessionToProject(project.id, 'sess');
  const mirror = createNodeMirror({ dag, root: tempDir() });
  const { projectGit, inputs } = spied(createNodeProjectGit({ dir: tempDir('eg-locks-') }));
  const service = createMirrorService({ mirror, ...(withDag ? { dag } : {}), projects: dag, projectGit });
  return { workdir, dag, mirror, service, inputs };
}

describe('the project auto-commit reads the user message from the DAG', () => {
  for (const withDag of [true, false]) {
    it(`hands afterTurn each turn's user message whole, as the DAG holds it (${withDag ? 'from the DAG source' : 'no dag option: from the commit'})`, async () => {
      const { workdir, dag, mirror, service, inputs } = await session(withDag);
      let prev: string | null = null;
      for (const [i, content] of MESSAGES.entries()) {
        const n = i + 1;
        const snapshot = await service.beforeTurn('sess');
        writeFileSync(join(workdir, `f${n}.txt`), `${n}\n`);
        await dag.appendNode({ id: `u${n}`, session_id: 'sess', role: 'user', content, predecessor: prev });
        await dag.appendNode({
          id: `a${n}`,
          session_id: 'sess',
          role: 'assistant',
          content: { text: 'Reading.', tool_calls: [{ id: `c${n}`, name: 'read' }] },
          predecessor: `u${n}`,
        });
        // The turn's last node is a tool result riding on its caller: the walk back goes through the caller.
        await dag.appendNode({
          id: `t${n}`,
          session_id: 'sess',
          role: 'tool',
          content: 'ok',
          predecessor: `a${n}`,
          caller: `a${n}`,
          metadata: { tool: 'read' },
        });
        prev = `a${n}`;
        service.notify('sess', { touchedPaths: [`f${n}.txt`], snapshot, ...(withDag ? {} : { node: `t${n}` }) });
        await service.drain();
      }

      expect(inputs.map((i) => i.userMessage)).toEqual(MESSAGES.map((c) => textOf(c)));
      expect(inputs.map((i) => i.turn)).toEqual([1, 2, 3]);
      const sessionLog = await mirror.log('sess');
      expect(inputs.map((i) => i.sessionCommit)).toEqual(sessionLog.map((c) => c.sha).reverse());
      // The commit keeps to docs/project-git.md: the subject holds the message folded, cut at 60 code points.
      const subjects = git(workdir, 'log', '--format=%s', '-3').trim().split('\n').reverse();
      expect(subjects).toEqual(MESSAGES.map((c, i) => `[agent sess] turn ${i + 1}: ${foldLine(textOf(c), 60)}`));
    });
  }
});
