// One turn in shadow mode on the object engine, run the same way in Node (node:fs) and in Chromium
// (lightning-fs on IndexedDB): the snapshot, tree and commit ids, a diff and a restore it gives
// must be the very same in both, and in Node equal to what native git writes for the same files.
import type { ObjectShadowProjectGit } from '@entity-git/project';

/** The clock of every snapshot commit in the fixture, so the commit ids are fixed. */
export const SHADOW_NOW = 1_700_000_000_000;

export const FILES_BEFORE: Readonly<Record<string, string>> = {
  '.gitignore': 'dist/\n',
  'a.txt': 'a1\n',
  'docs/readme.md': '# hi\n',
  'src/main.ts': 'export const x = 1;\n',
  'dist/out.js': 'ignored by .gitignore\n',
};

/** The ids and texts the fixture gives, on any platform (the Node test checks the trees and the diff against native git). */
export const SHADOW_GOLDEN = {
  beforeTree: '8bcdc34735bddb94995d0dcff0bd96e3dc464223',
  afterTree: '6b6afb1afca32a6fc173212994bc542ea45e78dc',
  before: 'ea851d9c246395a463f20226dcf65b203a8465a4',
  after: 'cd2fcddfd626b3e593644447da3fc117a90be0d2',
  restored: 'd8def0690cf9c6e8bfd970a44df49f81bdbe0a6a',
  diff: 'diff --git a/a.txt b/a.txt\nindex da0f8ed..0016606 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1,2 @@\n a1\n+a2\n',
};

export interface FixtureFs {
  write(path: string, text: string): Promise<void>;
  remove(path: string): Promise<void>;
  read(path: string): Promise<string | null>;
}

/** The turn: the agent's tool edits a.txt, "its shell" adds src/new.ts and deletes docs/readme.md; then the restore. */
export async function runShadowFixture(projectGit: ObjectShadowProjectGit, fs: FixtureFs, workdir: string) {
  for (const [path, text] of Object.entries(FILES_BEFORE)) await fs.write(`${workdir}/${path}`, text);
  const snapshot = await projectGit.beforeTurn(workdir);
  await fs.write(`${workdir}/a.txt`, 'a1\na2\n');
  await fs.write(`${workdir}/src/new.ts`, 'export const y = 2;\n');
  await fs.remove(`${workdir}/docs/readme.md`);
  await projectGit.afterTurn({
    workdir,
    sessionId: 'session-1',
    turn: 1,
    userMessage: 'edit',
    model: 'm',
    touchedPaths: ['a.txt'],
    snapshot,
  });
  const files = await projectGit.listTurnFiles({ workdir, sessionId: 'session-1', turn: 1 });
  const diff = await projectGit.turnFileDiff({ workdir, sessionId: 'session-1', turn: 1, path: 'a.txt' });
  const restore = await projectGit.restoreTurnFiles({ workdir, sessionId: 'session-1', turn: 1 });
  const afterRestore = {
    a: await fs.read(`${workdir}/a.txt`),
    readme: await fs.read(`${workdir}/docs/readme.md`),
    added: await fs.read(`${workdir}/src/new.ts`),
    ignored: await fs.read(`${workdir}/dist/out.js`),
  };
  return { files, diff, restore, afterRestore };
}
