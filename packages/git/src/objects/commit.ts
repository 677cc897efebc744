import { EntityGitError } from '../errors.js';
import { fromUtf8, utf8 } from '../bytes/utf8.js';
import { isOid } from './frame.js';

export interface Identity {
  name: string;
  email: string;
}

export interface CommitFields {
  tree: string;
  parents: string[];
  author: Identity & { time: number };
  committer: Identity & { time: number };
  message: string;
}

function signature(who: Identity & { time: number }): string {
  return `${who.name} <${who.email}> ${who.time} +0000`;
}

export function assertIdentity(who: Identity): void {
  for (const part of [who.name, who.email]) {
    if (typeof part !== 'string' || part.trim() === '' || /[<>\n\0]/.test(part)) {
      throw new EntityGitError(
        'INVALID_OPTION',
        `an identity needs a name and an email without <, >, newline or NUL: ${JSON.stringify(who)}`,
      );
    }
  }
}

export function buildCommit(c: CommitFields): Uint8Array {
  const lines = [
    `tree ${c.tree}`,
    ...c.parents.map((p) => `parent ${p}`),
    `author ${signature(c.author)}`,
    `committer ${signature(c.committer)}`,
  ];
  return utf8(`${lines.join('\n')}\n\n${c.message}`);
}

export interface ParsedCommit {
  tree: string;
  parents: string[];
  author: string;
  committer: string;
  /** Committer time, seconds. */
  time: number;
  message: string;
}

export function parseCommit(content: Uint8Array): ParsedCommit {
  const text = fromUtf8(content);
  const split = text.indexOf('\n\n');
  const head = split < 0 ? text : text.slice(0, split);
  const parsed: ParsedCommit = {
    tree: '',
    parents: [],
    author: '',
    committer: '',
    time: 0,
    message: split < 0 ? '' : text.slice(split + 2),
  };
  for (const line of head.split('\n')) {
    const sp = line.indexOf(' ');
    const key = line.slice(0, sp);
    const value = line.slice(sp + 1);
    if (key === 'tree') parsed.tree = value;
    else if (key === 'parent') parsed.parents.push(value);
    else if (key === 'author') parsed.author = value;
    else if (key === 'committer') {
      parsed.committer = value;
      parsed.time = Number(/ (-?\d+) [+-]\d{4}$/.exec(value)?.[1] ?? 0);
    }
  }
  if (!isOid(parsed.tree)) throw new EntityGitError('OBJECT_CORRUPT', 'a commit object has no tree');
  return parsed;
}
