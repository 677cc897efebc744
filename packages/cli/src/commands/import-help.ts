// Help of `entity-git import`, beside its command; help.ts merges it into COMMAND_HELP.

const OPTIONS = `Options:
  --watch             keep following the transcripts: each turn is committed once the transcript
                      closes it or goes quiet (Ctrl-C stops); new transcripts under DIR join
  --quiet-time T      a transcript quiet for T is finished: its last turn is committed even if
                      nothing in it closed that turn (default 5m; 30s, 1h, 0 = every transcript
                      is finished; a bare number is seconds). Quiet since its newest record's
                      timestamp (the file's modification time when records carry none); with
                      --watch, since the file last grew
  --strict            refuse a transcript with a damaged line instead of skipping the line
  --json              print the report as JSON (with --watch: one JSON line per session synced,
                      and {"warning": …} per line skipped)

Global options that apply:
  --root DIR          the session repositories (default ~/.openprogram/sessions)
  --identity "N <E>"  author and committer of session commits (default "entity-git <entity-git@localhost>")
  --layout L          flat|sharded, for repositories made from now on (default flat)
  -h, --help          this help`;

const COMMON = `Importing again is a no-op; a transcript that grew adds commits, earlier ids unchanged —
except the last turn of a transcript committed as finished that then grew: that turn is
committed again and its branch moved to the new commit (the old one stays in the reflog).
Commit ids are a pure function of the transcript's complete lines and of whether it is finished
(a last line without its newline is read only then), so two machines importing the same file
get the same ids.

A damaged line costs that line only: two records on one line are both read; a line that is not
JSON, or a record cut off, is skipped with a warning naming file and line (--strict refuses).
At the end a summary (stderr) counts sessions imported, unchanged, with warnings and failed.
Exit: 0 all imported, 4 imported but lines skipped, 2 a transcript could not be read, 3 a
storage error.`;

export const IMPORT_HELP: Record<string, string> = {
  import: `Usage: entity-git import claude-code [DIR] [--watch] [--quiet-time T] [--strict] [--json]
       entity-git import codex [DIR] [--watch] [--quiet-time T] [--strict] [--json]
       entity-git import gemini [DIR] [--watch] [--quiet-time T] [--strict] [--json]
       entity-git import messages FILE… [--watch] [--quiet-time T] [--strict] [--json]

Mirror transcripts that agents already write, one repository per session, without a database.

  claude-code   Claude Code sessions: DIR is ~/.claude/projects (the default), one project's
                directory or one .jsonl file
  codex         Codex CLI rollouts: DIR is ~/.codex/sessions (the default; $CODEX_HOME/sessions)
                or one rollout .jsonl file
  gemini        Gemini CLI sessions: DIR is ~/.gemini/tmp (the default), a project's chats
                directory or one session file (.jsonl, or the older .json)
  messages      OpenAI-style message logs (a JSON array of {role, content, tool_calls, …}, an
                object with "messages", or JSONL); the session id is the file name

${COMMON}

${OPTIONS}`,
  'import claude-code': `Usage: entity-git import claude-code [DIR] [--watch] [--quiet-time T] [--strict] [--json]

Mirror the Claude Code sessions under DIR (default ~/.claude/projects; a project's directory or
one .jsonl file also do). Session id: the file name without .jsonl; a sidechain logged inline
is its own session <session>.agent-<uuid>. One branch per real fork (an edited prompt, a
regenerated reply); parallel tool calls stay on their turn. A turn is committed once a final
stop_reason or a turn-end record closes it, or the transcript goes quiet (older versions of
Claude Code write neither).

${COMMON}

${OPTIONS}`,
  'import codex': `Usage: entity-git import codex [DIR] [--watch] [--quiet-time T] [--strict] [--json]

Mirror the Codex CLI rollouts under DIR (default ~/.codex/sessions, or $CODEX_HOME/sessions;
one rollout file also does). Session id: the file name without .jsonl. One linear path; a
turn is committed once its task_complete event is logged, or the rollout goes quiet.

${COMMON}

${OPTIONS}`,
  'import gemini': `Usage: entity-git import gemini [DIR] [--watch] [--quiet-time T] [--strict] [--json]

Mirror the Gemini CLI sessions under DIR (default ~/.gemini/tmp: every file under a chats
directory, sub-agents' too; one .jsonl file, or the older .json, also does). Session id: the file
name without its extension. One path, each message continuing the one before; a /rewind
($rewindTo) keeps the messages it dropped as a branch of their own, and HEAD follows the
conversation as it is; a record that replaces an earlier one (the same id) commits its turn
again. A reply's tool calls, with their results, are on its tools: line. A turn is committed
once answered and its tool calls finished, or when the file goes quiet.

${COMMON}

${OPTIONS}`,
  'import messages': `Usage: entity-git import messages FILE… [--watch] [--quiet-time T] [--strict] [--json]

Mirror OpenAI-style message logs: one session per FILE, its id the file name without .json or
.jsonl. Message n of the file is node m<n>; a tool message rides on the assistant whose
tool_calls named it. A message without created_at/timestamp takes the time of the one before
(the epoch for the first). The last turn is committed once the log ends with an assistant reply
without tool calls, or goes quiet.

${COMMON}

${OPTIONS}`,
};
