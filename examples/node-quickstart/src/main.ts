// The quickstart: a scripted agent conversation in a SQLite DAG, mirrored into a session git
// repository turn by turn — tool calls, a placeholder filled late, a retry, a fork from an old
// turn — with a project in the default mode, shadow: each turn's files snapshotted before and after
// in a private repository, nothing written into the project; then what a user can look at: the
// session repository, and what each turn changed in the project and who changed it.
import { createMirrorService, type TurnReport } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { closeShadowWatchers, createNodeProjectGit, ShadowProjectGit } from '@entity-git/project/node';
import { openSqlite } from '@entity-git/sqlite';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const base = resolve(process.argv[2] ?? '.demo');
rmSync(base, { recursive: true, force: true });
mkdirSync(base, { recursive: true });
const dbFile = join(base, 'entity-git.db');
const root = join(base, 'sessions');

// The project lives outside this checkout, in a folder that is no git repository: shadow mode
// needs none, and writes nothing into it.
const workdir = join(tmpdir(), 'entity-git-quickstart-project');
rmSync(workdir, { recursive: true, force: true });
mkdirSync(workdir);

const store = await openSqlite({ file: dbFile });
const mirror = createNodeMirror({ dag: store.dag, root });
const w = store.writer;
const sid = 'demo-session';
let clock = 1779500000;
const at = () => (clock += 2);

const say = (line = '') => console.log(line);
// The dispatcher's side: one non-blocking notify per turn; drain() here only to print in order.
// The default mode is shadow; `autoCommit` serves a project switched to auto-commit mode.
const projectGit = new ShadowProjectGit({
  root: join(base, 'shadow'),
  autoCommit: createNodeProjectGit({ dir: join(base, 'locks') }),
});
const service = createMirrorService({ mirror, dag: store.dag, projects: store.projects, projectGit });
service.on('synced', ({ result: r }) =>
  say(
    `  sync: ${r.commitsWritten} commit(s), branches moved: ${r.branchesMoved.join(', ') || 'none'}, HEAD → ${r.head ?? '(unborn)'}`,
  ),
);
service.on('project', ({ result }) =>
  say(
    `  project: ${result.status === 'committed' ? `agent commit ${result.commit.slice(0, 7)} (${result.paths.join(', ')})` : result.status === 'skipped' && result.reason === 'shadow-mode' ? 'snapshotted before and after the turn (shadow mode)' : `skipped (${result.status === 'skipped' ? result.reason : result.status})`}`,
  ),
);
service.on('skipped', ({ warning }) => say(`  ⚠ ${warning}`));
service.on('failed', ({ error }) => say(`  ✗ ${error.code}: ${error.message}`));
const sync = async (why: string, turn?: TurnReport) => {
  say(`  — ${why}`);
  service.notify(sid, turn);
  await service.drain();
};

await w.createSession({
  id: sid,
  title: 'Refactor the parser',
  agent_id: 'demo-agent',
  model: 'claude-sonnet-4.7',
  created_at: clock,
});
const project = await store.projects.createProject({ name: 'Parser refactor', workdir });
await store.projects.addSessionToProject(project.id, sid);
say(`entity-git quickstart — DAG in ${dbFile}, session repositories under ${root}, project in ${workdir}`);
say();

say('turn 1: the user asks; the assistant placeholder is written first and filled after two tool calls;');
say('        the agent writes src/parser.ts into the project');
let snapshot = await service.beforeTurn(sid);
const u1 = await w.appendNode({
  id: 'u1',
  session_id: sid,
  role: 'user',
  content: 'What is in src/? 列出文件 🙂',
  created_at: at(),
});
const a1 = await w.appendNode({
  id: 'a1',
  session_id: sid,
  role: 'assistant',
  content: '',
  predecessor: u1.id,
  created_at: at(),
  metadata: { pending: true },
});
await sync('placeholder still pending — nothing to commit yet');
await w.appendNode({
  id: 't1',
  session_id: sid,
  role: 'tool',
  content: 'parser.ts\nlexer.ts',
  predecessor: a1.id,
  caller: a1.id,
  created_at: at(),
  metadata: { tool: 'list' },
});
const t2 = await w.appendNode({
  id: 't2',
  session_id: sid,
  role: 'tool',
  content: 'export function parse() { /* TODO */ }',
  predecessor: a1.id,
  caller: a1.id,
  created_at: at(),
  metadata: { tool: 'read' },
});
await w.fillNode(sid, a1.id, { text: 'Listing and reading.', tool_calls: ['list', 'read'] }, { tokens: 120 });
mkdirSync(join(workdir, 'src'));
writeFileSync(
  join(workdir, 'src/parser.ts'),
  'export function parse(text: string) {\n  return text.split(/\\s+/);\n}\n',
);
const a1b = await w.appendNode({
  id: 'a1b',
  session_id: sid,
  role: 'assistant',
  content: 'src/ holds parser.ts and lexer.ts; parse() has a TODO.',
  predecessor: t2.id,
  created_at: at(),
  metadata: { tokens: 80 },
});
await sync('turn 1 complete', { touchedPaths: ['src/parser.ts'], snapshot });

say('turn 2: a request with three greps; meanwhile the user has an edit of their own in the project');
writeFileSync(join(workdir, 'NOTES.md'), 'my own notes, not committed yet\n');
snapshot = await service.beforeTurn(sid);
const u2 = await w.appendNode({
  id: 'u2',
  session_id: sid,
  role: 'user',
  content: 'Find every TODO',
  predecessor: a1b.id,
  created_at: at(),
});
const a2 = await w.appendNode({
  id: 'a2',
  session_id: sid,
  role: 'assistant',
  content: 'Searching.',
  predecessor: u2.id,
  created_at: at(),
  metadata: { tokens: 30 },
});
let last = a2.id;
for (const [i, hit] of ['parser.ts:3', 'lexer.ts:9', 'README.md:1'].entries()) {
  last = (
    await w.appendNode({
      id: `g${i}`,
      session_id: sid,
      role: 'tool',
      content: hit,
      predecessor: last,
      caller: a2.id,
      created_at: at(),
      metadata: { tool: 'grep' },
    })
  ).id;
}
writeFileSync(join(workdir, 'src/todo.md'), '- parser.ts:3\n- lexer.ts:9\n- README.md:1\n');
await w.appendNode({
  id: 'a2b',
  session_id: sid,
  role: 'assistant',
  content: 'Three TODOs: parser.ts:3, lexer.ts:9, README.md:1.',
  predecessor: last,
  created_at: at(),
  metadata: { tokens: 60 },
});
await sync('turn 2 complete', { touchedPaths: ['src/todo.md'], snapshot });

say('retry: the user asks for another answer to turn 2 — a retry branch');
const retry = await w.appendNode({
  id: 'a2r',
  session_id: sid,
  role: 'assistant',
  content: 'I found 3 TODO comments (two in code, one in docs).',
  predecessor: last,
  created_at: at(),
});
await w.setHead(sid, retry.id);
await sync('retry');

say('fork: the user goes back to turn 1 and sends a different message from there');
const f = await w.appendNode({
  id: 'u3',
  session_id: sid,
  role: 'user',
  content: 'Instead: explain lexer.ts',
  predecessor: a1b.id,
  created_at: at(),
});
await w.appendNode({
  id: 'a3',
  session_id: sid,
  role: 'assistant',
  content: 'lexer.ts turns text into tokens.',
  predecessor: f.id,
  created_at: at(),
});
await w.setHead(sid, null);
await sync('fork from turn 1 (HEAD follows the newest leaf)');
const again = await mirror.sync(sid);
say(`  sync again: ${again.noop ? 'nothing to do (idempotent)' : 'wrote something?!'}`);
say();

const dir = mirror.repoPath(sid);
const git = (...args: string[]) => {
  try {
    return execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trimEnd();
  } catch (err) {
    return `(git ${args[0]} failed: ${(err as Error).message.split('\n')[0]})`;
  }
};
say(`$ cd ${dir} && git log --graph --all --format='%h %d %s'`);
say(git('log', '--graph', '--all', '--format=%h %d %s'));
say();
say('$ git status --porcelain   (empty: the working tree is the HEAD branch)');
say(git('status', '--porcelain') || '(clean)');
say();
const branches = await mirror.branches(sid);
say(`branches: ${branches.map((b) => `${b.name}${b.head ? ' (HEAD)' : ''} @ ${b.commit.slice(0, 7)}`).join(', ')}`);
const log = await mirror.log(sid, { branch: 'main' });
const view = await mirror.read(sid, log.at(-1)!.sha, { branch: 'main' });
say(
  `replay of main at ${view.commit.slice(0, 7)}: ← prev ${view.prev?.slice(0, 7) ?? '—'}  Turn ${view.turn} / ${view.turns}  next → ${view.next?.slice(0, 7) ?? '—'}`,
);
for (const m of view.messages) say(`  #${m.seq} ${m.role.padEnd(9)} ${JSON.stringify(m.content).slice(0, 70)}`);
say();
say('$ git fsck --strict');
say(git('fsck', '--strict') || '(no problems)');
const report = await mirror.verify(sid);
say(`verify: ${report.ok ? 'the repository equals the DAG' : JSON.stringify(report.differences)}`);
say();
say('Try it yourself:');
say(`  cd ${dir}`);
say('  git log --graph --all --oneline; git show main~1; git checkout retry-a2r; git reflog');
say(`  sqlite3 ${dbFile} 'select seq, role, id from nodes'   (if you have sqlite3)`);
say();
say(`the project (${workdir}): what each turn changed, from its shadow snapshots`);
for (const turn of [1, 2]) {
  const { files } = await projectGit.listTurnFiles({ workdir, sessionId: sid, turn });
  for (const f of files) say(`  turn ${turn}: ${f.status} ${f.path} (+${f.added} -${f.removed}, by ${f.by})`);
}
say("  (the user's NOTES.md, written before turn 2 began, is in no turn)");
say(await projectGit.turnFileDiff({ workdir, sessionId: sid, turn: 1, path: 'src/parser.ts' }));
say(
  `is the project a git repository? ${existsSync(join(workdir, '.git')) ? 'yes' : 'no: shadow mode wrote nothing into it'}`,
);
await service.close();
closeShadowWatchers();
await store.close();
if (!report.ok) process.exit(1);
