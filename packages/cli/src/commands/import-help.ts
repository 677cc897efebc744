// Help of `entity-git import`, beside its command; help.ts merges it into COMMAND_HELP.

const OPTIONS = `Options:
  --watch        keep following the transcripts: each turn is committed once the transcript
                 closes it (Ctrl-C stops); new transcripts under DIR join as they appear
  --json         print the report as JSON (with --watch: one JSON line per session synced)

Global options that apply:
  --root DIR          the session repositories (default ~/.openprogram/sessions)
  --identity "N <E>"  author and committer of session commits (default "entity-git <entity-git@localhost>")
  --layout L          flat|sharded, for repositories made from now on (default flat)
  -h, --help          this help`;

const COMMON = `Importing again is a no-op; a transcript that grew only adds commits, earlier ids unchanged.
Commit ids are a pure function of the transcript's complete lines (a last line still being
written is left for later), so two machines importing the same file get the same ids.`;

export const IMPORT_HELP: Record<string, string> = {
  import: `Usage: entity-git import claude-code [DIR] [--watch] [--json]
       entity-git import codex [DIR] [--watch] [--json]
       entity-git import messages FILE… [--watch] [--json]

Mirror transcripts that agents already write, one repository per session, without a database.

  claude-code   Claude Code sessions: DIR is ~/.claude/projects (the default), one project's
                directory or one .jsonl file
  codex         Codex CLI rollouts: DIR is ~/.codex/sessions (the default; $CODEX_HOME/sessions)
                or one rollout .jsonl file
  messages      OpenAI-style message logs (a JSON array of {role, content, tool_calls, …}, an
                object with "messages", or JSONL); the session id is the file name

${COMMON}

${OPTIONS}`,
  'import claude-code': `Usage: entity-git import claude-code [DIR] [--watch] [--json]

Mirror the Claude Code sessions under DIR (default ~/.claude/projects; a project's directory or
one .jsonl file also do). Session id: the file name without .jsonl; a sidechain logged inline
is its own session <session>.agent-<uuid>. One branch per real fork (an edited prompt, a
regenerated reply); parallel tool calls stay on their turn.

${COMMON}

${OPTIONS}`,
  'import codex': `Usage: entity-git import codex [DIR] [--watch] [--json]

Mirror the Codex CLI rollouts under DIR (default ~/.codex/sessions, or $CODEX_HOME/sessions;
one rollout file also does). Session id: the file name without .jsonl. One linear path; a
turn is committed once its task_complete event is logged.

${COMMON}

${OPTIONS}`,
  'import messages': `Usage: entity-git import messages FILE… [--watch] [--json]

Mirror OpenAI-style message logs: one session per FILE, its id the file name without .json or
.jsonl. Message n of the file is node m<n>; a tool message rides on the assistant whose
tool_calls named it. A message without created_at/timestamp takes the time of the one before
(the epoch for the first).

${COMMON}

${OPTIONS}`,
};
