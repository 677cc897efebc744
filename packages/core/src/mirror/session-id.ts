import { assertId } from '../model/names.js';

declare const checked: unique symbol;

/**
 * A session id checked where it entered the mirror (a {@link Mirror} method, or the repository
 * layer's `openRepo` for the packages built on core): a non-empty string of at most
 * `MAX_ID_BYTES`. Everything inside takes this type and trusts it (docs/design.md, 'Where a
 * session id is checked').
 */
export type SessionId = string & { readonly [checked]: true };

/** The edge's check (`INVALID_ID` for an id no store should hold). */
export function sessionIdOf(id: unknown): SessionId {
  assertId(id, 'session id');
  return id as SessionId;
}
