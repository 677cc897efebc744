import type { JsonValue, Session } from './types.js';

/**
 * The session fields every commit's `meta.json` holds: those that never change in a session's
 * life. A commit id must be a pure function of the DAG (docs/design.md, 'Turns, commits and branches'), so a field that an
 * application may edit later — the title (most applications write it after the first turn), the
 * project (joined or left), the metadata, and also `agent_id` and `model` (a user switches model in
 * the middle of a conversation) — cannot be in a commit's tree. Those are carried by the meta ref
 * ({@link META_REF}) instead.
 */
export const IMMUTABLE_SESSION_FIELDS = Object.freeze(['id', 'created_at'] as const);

/** The content of `meta.json` in every commit of a session: its immutable fields. */
export function immutableMeta(s: Pick<Session, 'id' | 'created_at'>): JsonValue {
  return { id: s.id, created_at: s.created_at };
}

/**
 * The ref that shows the session row as it is now, readable with plain git:
 * `git show refs/entity-git/meta:session.json`. Its commit is a pure function of the row, so two
 * mirrors of one DAG hold the same one.
 */
export const META_REF = 'refs/entity-git/meta';

/**
 * The row as the meta ref shows it: every field but `head`, which moves every turn and which HEAD
 * already shows (the branch it names).
 */
export function sessionRecord(s: Session): JsonValue {
  return {
    id: s.id,
    title: s.title,
    agent_id: s.agent_id,
    model: s.model,
    project_id: s.project_id,
    created_at: s.created_at,
    metadata: s.metadata,
  };
}

/**
 * The format of session repositories this library writes, recorded in `.git/config`
 * (`[entitygit] format = 2`; docs/design.md, "Repository format"). A config recording another is
 * refused (`REPO_FORMAT_OLD`, `REPO_CORRUPT` for a newer one); one without the key is given it.
 */
export const REPO_FORMAT = 2;
