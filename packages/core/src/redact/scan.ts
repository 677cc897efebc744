import {
  fromUtf8,
  joinPath,
  LOCK_DEFAULTS,
  ObjectStore,
  parseCommit,
  parseTree,
  RefStore,
  type Storage,
  storeFor,
} from '@entity-git/git';
import { parseTrailers } from '../model/commit-message.js';
import { META_REF } from '../model/session-meta.js';
import type { Repo } from '../mirror/repo/repo.js';
import type { Redactor } from './redactor.js';
import { sessionIdOf } from '../mirror/session-id.js';

/** One secret a repository holds: where it first appears on a commit's history. */
export interface SecretFinding {
  /** The rule that found it (`github`, `aws`, a user pattern's name…). */
  rule: string;
  /** The session the repository mirrors. */
  session: string;
  /** The commit whose tree (or message) brought it in: new or changed there against its first parent. */
  commit: string;
  /** The file's path in that commit's tree; null for the commit message. */
  file: string | null;
  /** The 1-based line in the file (or message) where it starts. */
  line: number;
}

/** Options of {@link scanRepository}. */
export interface ScanOptions {
  /** The commits to start from. Default: every branch's tip and the meta ref. */
  tips?: readonly string[];
  /** Commits (and their ancestors) not to scan, such as those a remote already has. Default none. */
  exclude?: readonly string[];
}

/**
 * Every secret `redactor` finds in the commits reachable from the repository's branches and meta
 * ref (docs/design.md, 'Redaction'): each commit's message, and each file its tree adds or
 * changes against its first parent (a file carried on unchanged is reported once, where it came
 * in). JSON files are read as text and their strings also decoded, so a secret split by a JSON
 * escape (a private key's `\n`) is found too. Reads objects only; any repository will do.
 */
export async function scanRepository(
  repo: Repo,
  redactor: Redactor,
  options: ScanOptions = {},
): Promise<SecretFinding[]> {
  const tips = options.tips ?? (await defaultTips(repo));
  const skip = await ancestry(repo.objects, options.exclude ?? [], new Set());
  const commits = [...(await ancestry(repo.objects, tips, skip))].filter((c) => !skip.has(c));
  const blobCache = new Map<string, { rule: string; line: number }[]>();
  const findings: SecretFinding[] = [];
  for (const sha of commits.sort()) {
    const c = parseCommit(await repo.objects.readTyped(sha, 'commit'));
    const session = parseTrailers(c.message)?.session ?? repo.sessionId;
    for (const f of await findInText(redactor, c.message, false))
      findings.push({ ...f, session, commit: sha, file: null });
    const before = c.parents[0] === undefined ? new Map<string, string>() : await blobsOf(repo.objects, c.parents[0]);
    for (const [path, oid] of await blobsOf(repo.objects, sha)) {
      if (before.get(path) === oid) continue;
      let found = blobCache.get(oid);
      if (found === undefined) {
        const text = fromUtf8(await repo.objects.readTyped(oid, 'blob'));
        found = await findInText(redactor, text, path.endsWith('.json'));
        blobCache.set(oid, found);
      }
      for (const f of found) findings.push({ ...f, session, commit: sha, file: path });
    }
  }
  return findings;
}

/**
 * Any repository at `dir` (its `.git` inside), for {@link scanRepository}: one the mirror made or
 * not. `sessionId` names it in findings whose commit has no `Session:` trailer.
 */
export function repositoryAt(storage: Storage, dir: string, sessionId: string): Repo {
  const store = storeFor(storage);
  const gitdir = joinPath(dir, '.git');
  return {
    sessionId: sessionIdOf(sessionId),
    dir,
    gitdir,
    objects: new ObjectStore(store, gitdir),
    refs: new RefStore(store, gitdir, LOCK_DEFAULTS.ref),
  };
}

async function defaultTips(repo: Repo): Promise<string[]> {
  const refs = [...(await repo.refs.branches()).map((b) => `refs/heads/${b}`), META_REF];
  const tips: string[] = [];
  for (const ref of refs) {
    const oid = await repo.refs.resolve(ref).catch(() => null);
    if (oid !== null) tips.push(oid);
  }
  return tips;
}

/** Every commit reachable from `tips` (ones the repository lacks are left out), stopping at `stop`. */
async function ancestry(
  objects: ObjectStore,
  tips: readonly string[],
  stop: ReadonlySet<string>,
): Promise<Set<string>> {
  const seen = new Set<string>();
  const todo = [...tips];
  while (todo.length > 0) {
    const sha = todo.pop()!;
    if (seen.has(sha) || stop.has(sha) || !(await objects.has(sha))) continue;
    // A host advertises tags too (the HEAD record): only commits have a history to walk.
    const object = await objects.read(sha);
    if (object.type !== 'commit') continue;
    seen.add(sha);
    todo.push(...parseCommit(object.content).parents);
  }
  return seen;
}

/** The blobs of a commit's tree by path. */
async function blobsOf(objects: ObjectStore, commit: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walkTree = async (tree: string, prefix: string): Promise<void> => {
    for (const e of parseTree(await objects.readTyped(tree, 'tree'))) {
      if (e.mode === '40000') await walkTree(e.oid, `${prefix}${e.name}/`);
      else if (e.mode !== '160000') out.set(`${prefix}${e.name}`, e.oid);
    }
  };
  await walkTree(parseCommit(await objects.readTyped(commit, 'commit')).tree, '');
  return out;
}

const lineAt = (text: string, offset: number): number => {
  let line = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
};

/** The secrets of one text, and of its JSON strings decoded when `json`; one per rule and line. */
async function findInText(redactor: Redactor, text: string, json: boolean): Promise<{ rule: string; line: number }[]> {
  const out = new Map<string, { rule: string; line: number }>();
  const add = (rule: string, line: number) => out.set(`${line}\0${rule}`, { rule, line });
  for (const r of await redactor.find(text)) add(r.rule, lineAt(text, r.start));
  if (json) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    for (const s of stringsOf(parsed)) {
      const found = await redactor.find(s);
      if (found.length === 0) continue;
      const at = text.indexOf(JSON.stringify(s));
      for (const r of found) add(r.rule, at < 0 ? 1 : lineAt(text, at));
    }
  }
  return [...out.values()].sort((a, b) => a.line - b.line || (a.rule < b.rule ? -1 : 1));
}

function* stringsOf(v: unknown): Generator<string> {
  if (typeof v === 'string') yield v;
  else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) yield* stringsOf(x);
}
