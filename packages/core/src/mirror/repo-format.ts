import {
  isEntityGitError,
  parseCommit,
  parseTree,
  type Identity,
  type ObjectStore,
  type RefStore,
} from '@entity-git/git';
import { REPO_FORMAT } from '../model/session-meta.js';

/** Where a rebuild keeps the tips a format-1 repository had: `refs/entity-git/format-1/heads/<branch>`. */
export const FORMAT_1_BACKUP = 'refs/entity-git/format-1/heads/';

/** The format a config records (`[entitygit] format = N`), or null. */
export function configuredFormat(text: string | null): number | null {
  const value = entitygitValue(text, /^\s*format\s*=\s*(\d+)\s*$/i, () => true);
  return value === null ? null : Number(value);
}

/**
 * The first value in a config's `[entitygit]` section whose line `pattern` matches (its group 1)
 * and `accept` takes, or null: the reader of `format` here and of `layout` in repo-config.ts.
 */
export function entitygitValue(
  text: string | null,
  pattern: RegExp,
  accept: (value: string) => boolean,
): string | null {
  if (text === null) return null;
  let inSection = false;
  for (const line of text.split('\n')) {
    const section = /^\s*\[([^\]]*)\]/.exec(line);
    if (section) inSection = section[1]!.trim().toLowerCase() === 'entitygit';
    else if (inSection) {
      const m = pattern.exec(line);
      if (m && accept(m[1]!)) return m[1]!;
    }
  }
  return null;
}

/** The config text with `format = <REPO_FORMAT>` in its `[entitygit]` section (added when absent). */
export function withFormat(text: string): string {
  const body = text.replace(/\n?$/, '\n');
  const lines = body.split('\n');
  const out: string[] = [];
  let inSection = false;
  let done = false;
  for (const line of lines) {
    const section = /^\s*\[([^\]]*)\]/.exec(line);
    if (section) {
      inSection = section[1]!.trim().toLowerCase() === 'entitygit';
      out.push(line);
      if (inSection && !done) {
        out.push(`\tformat = ${REPO_FORMAT}`);
        done = true;
      }
    } else if (inSection && /^\s*format\s*=/i.test(line)) {
    } else out.push(line);
  }
  const joined = out.join('\n');
  return done ? joined : `${joined}[entitygit]\n\tformat = ${REPO_FORMAT}\n`;
}

/**
 * The format of a repository whose config does not record one (written before formats were
 * recorded, or cloned: a clone does not carry `.git/config`): 2 when it has no branch or when the
 * tip of every branch holds exactly today's `meta.json` (the immutable fields), else 1. A
 * rebuild that a crash cut short leaves some tips in each format: that reads as 1, so it is
 * never taken for a whole format-2 history.
 */
export async function formatFromTrees(
  objects: ObjectStore,
  refs: RefStore,
  metaOid: string,
): Promise<{ format: 1 | 2; tips: Map<string, string> }> {
  const tips = new Map<string, string>();
  let format: 1 | 2 = 2;
  for (const name of await refs.branches()) {
    let tip: string | null;
    try {
      tip = await refs.resolve(`refs/heads/${name}`);
    } catch (err) {
      if (isEntityGitError(err, 'REF_CORRUPT')) continue;
      throw err;
    }
    if (tip === null) continue;
    tips.set(name, tip);
    try {
      const root = parseTree(await objects.readTyped(parseCommit(await objects.readTyped(tip, 'commit')).tree, 'tree'));
      if (root.find((e) => e.name === 'meta.json')?.oid !== metaOid) format = 1;
    } catch (err) {
      // a damaged tip says nothing about the format; repair rewrites it
      if (!isEntityGitError(err, 'OBJECT_NOT_FOUND') && !isEntityGitError(err, 'OBJECT_CORRUPT')) throw err;
    }
  }
  return { format, tips };
}

/**
 * Before a rebuild moves any ref: keep every branch tip of the old format reachable under
 * {@link FORMAT_1_BACKUP}. A backup already there (a rebuild a crash cut short) is kept: it
 * holds the tip from before the first attempt.
 */
export async function backUpFormat1(refs: RefStore, tips: Map<string, string>, who: Identity): Promise<void> {
  for (const [name, tip] of tips) {
    const ref = `${FORMAT_1_BACKUP}${name}`;
    if ((await refs.readRaw(ref).catch(() => null)) !== null) continue;
    await refs.update(ref, tip, {
      old: null,
      reflog: { who, message: 'entity-git: format 1 tip kept before the rebuild' },
    });
  }
}
