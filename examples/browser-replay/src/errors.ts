// Errors as a person reads them: a sentence first, the code and the library's message on a
// details line beneath (what a bug report needs). Unknown codes get a generic sentence.
export interface ShownError {
  text: string;
  code: string;
  detail: string;
}

const SENTENCES: Record<string, string> = {
  INVALID_WORKDIR: 'The directory must be an absolute path on the server’s machine, like /home/you/code/project.',
  NOT_A_REPOSITORY: 'That folder is in no git repository.',
  BUSY: 'The server is busy with this window’s other requests; try again in a moment.',
  DUPLICATE_PROJECT: 'A project with that name or directory exists already.',
  PROJECT_NOT_FOUND: 'That project no longer exists.',
  SESSION_NOT_FOUND: 'That session no longer exists.',
  COMMIT_NOT_FOUND: 'That turn is not in this session’s history (the link may be from another copy).',
  BRANCH_NOT_FOUND: 'That branch does not exist in this session.',
  INVALID_ARGUMENT: 'The request was not valid.',
  INVALID_ID: 'That id is not valid.',
  DISCONNECTED: 'The connection to the server closed.',
  OFFLINE: 'This needs the server: the offline copy can only replay.',
  UNAUTHORIZED: 'The server refused the token.',
  LOCK_TIMEOUT: 'The repository is busy; try again in a moment.',
  REVERT_CONFLICT:
    'A later commit changed the same files: taking the agent’s edits back would take that change back too. Nothing was changed.',
  REVERT_REFUSED: 'It cannot be done safely right now (the reason is below). Nothing was changed.',
  NOT_AGENT_COMMIT: 'That commit is not the agent’s: only the agent’s own commits are undone.',
  SNAPSHOT_NOT_FOUND:
    'No snapshots of the project’s files were kept for this turn: it ran before the project kept them, or they were pruned.',
  AGENT_COMMIT_NOT_FOUND: 'The agent made no commit for this turn on the project’s current branch.',
};

export function shownError(err: unknown): ShownError {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? e.code : 'ERROR';
  const message = typeof e?.message === 'string' ? e.message : String(err);
  const detail = message.replace(/^\[entity-git\] (\[\w+\] )?/, '');
  return { text: SENTENCES[code] ?? 'Something went wrong.', code, detail };
}
