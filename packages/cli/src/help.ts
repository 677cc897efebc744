import { IMPORT_HELP } from './commands/import-help.js';
// Help texts: what `--help` prints at each level. Kept beside each other so the wording of the
// options stays the same everywhere.

/** The options of the commands that talk to a git host (push, restore). */
const REMOTE_OPTIONS = `Options:
  --remote URL   the git host, e.g. https://git.example.com/sessions/{session}.git
  --session ID   only this session
  --json         print the report as JSON
`;

const GLOBAL = `Global options:
  --db PATH|URL       the DAG database: a SQLite file (must exist) or a postgres:// URL
                      (default ~/.openprogram/entity-git.db); an application's own database in a
                      known schema (messages, flat-dag) is recognised and read, never written;
                      so are LangGraph checkpoints (Python or JS) and Mastra's storage
  --config FILE       table/column names, value formats or a mapping of the database, as JSON
                      (default: <db>.entity-git.json beside a SQLite file, when it exists)
  --root DIR          the session repositories (default ~/.openprogram/sessions)
  --identity "N <E>"  author and committer of session commits; must match the application's,
                      since it is part of every commit id (default "entity-git <entity-git@localhost>")
  --layout L          flat|sharded: how repositories made from now on lay out messages/
                      (default flat; an existing repository keeps the layout it records)
  -h, --help          this help`;

export const TOP_HELP = `entity-git — the git mirror of an agent's conversation DAG, one repository per session

Usage: entity-git [global options] COMMAND [options]

Commands:
  sync [--session ID]                 backfill and repair the session repositories (progress bar on a terminal)
  watch [--interval MS] [--channel C] mirror every change another program writes, until Ctrl-C
  verify [--session ID]               check that every repository equals its DAG (exit 1 if not)
  log SESSION [--branch B]            the commits of a branch, newest first
  log --project PROJECT               the agent's commits in a project's repository
  push --remote URL [--session ID]    push every branch of the session repositories to a git host
                                      (refused when what it sends holds a secret, unless --allow-secrets)
  scan [--session ID]                 report the secrets any repository holds, in every commit (exit 1 if any)
  export SESSION --format md|html|jsonl  a branch as a file people read (or one node per line), redacted
  restore --remote URL [--session ID] rebuild session repositories from a git host alone
  clone --remote URL [--session ID]   another name for restore
  show SESSION [TURN|SHA] [--branch B]  a turn as it stood at a commit: turn N / M, prev/next, messages
  branches SESSION                    the branches of a session, HEAD marked
  stats SESSION [--branch B]          tokens and cost per turn, per branch and for the session
  prune [--dry-run] [--archive DIR]   remove the repositories of sessions the database deleted
  du                                  the disk each session repository takes, and the total
  search QUERY [--all-branches]       the messages of every session holding the query's words
  projects list|create|add-session|status|import  the projects sessions belong to
  projects revert SESSION TURN        undo the agent's commit of a turn in the session's project
  projects diff SESSION TURN [PATH]   the files a turn changed (shadow snapshots), or one file's diff
  projects restore SESSION TURN       put the files a turn changed back as they were before it
  projects mode PROJECT [MODE]        show or choose a project's mode: shadow or auto-commit
  import claude-code|codex [DIR]      mirror transcripts agents wrote (--watch follows them)
  import messages FILE…               mirror OpenAI-style message logs

Every command takes --json: stable output for scripts (docs/cli-json.md).

${GLOBAL}
  --version           print the version

Exit codes: 0 ok, 1 verify found differences or sync failed, 2 bad arguments or input
(unknown session, branch, commit, project; missing database), 3 storage or internal error.

Run "entity-git COMMAND --help" for a command's options.`;

export const COMMAND_HELP: Record<string, string> = {
  search: `Usage: entity-git search QUERY [--session ID] [--role R] [--branch B | --all-branches]
                         [--regex] [--limit N] [--json] [--reindex | --compact]

The messages holding every word of QUERY (letters and digits, case folded, whole words), newest
first, from entity-git's own index beside the repositories (<root>/.entity-git-search.db), which
every sync updates. No database is read. Each hit names its session, branch, turn, commit, node
and role, with the text around the match; a message shared by several branches is one hit.

Options:
  --session ID      only this session
  --role R          only user, assistant, tool or system messages
  --branch B        messages on branch B (default: each session's HEAD branch)
  --all-branches    messages on any branch
  --regex           QUERY is a JavaScript regular expression over each message's text (reads
                    every message the other options leave: slower)
  --limit N         at most N hits (default 20, at most 1000)
  --reindex         rebuild the index from the repositories alone first (QUERY may be left out)
  --compact         pack the index back to its smallest first, as a rebuild leaves it: its pages
                    fill up again, its full-text segments merged into one (QUERY may be left out)
  --json            { hits: [{ session, branch, branches, turn, commit, node, role, seq,
                    snippet, highlights }], more }

Exit codes: 0 found, 1 nothing found, 2 bad arguments, 3 the index cannot be read.

${GLOBAL}`,
  sync: `Usage: entity-git sync [--session ID] [--full] [--quiet-time T] [--dry-run] [--json]

Reconcile every session of the database (or one) with its repository: a session without a
repository is backfilled whole; one that differs (damaged ref, missing objects, missing commits)
is repaired, keeping every commit that still matches the DAG. Idempotent; safe while the application mirrors live. A session whose
change marker (kept by the database's triggers) and refs equal what its last sync recorded is
unchanged without reading its DAG; --full compares every session in full, and also finds objects
damaged below intact refs.

On a terminal a progress bar is redrawn in place; otherwise one line per session:
  12/40 SESSION unchanged|backfilled|empty|repaired (kinds)|failed (CODE: message)
then a summary. Exit 1 if any session failed.

Options:
  --session ID   only this session
  --full         compare every session in full (objects too), not only those that changed
  --dry-run      write nothing: how the database is read (the schema or mapping), its sessions,
                 one session's nodes (--session, default the first) in role, parent, turn and
                 branch terms, and the problems found (several roots, a missing parent, open
                 turns and why)
  --quiet-time T an application's database (mapped or recognised): a session whose newest row is
                 older than T is quiet, and the turns it still holds open are committed (default
                 5m, as for transcripts; 30s, 2h, 0)
  --json         no progress; print the report as JSON at the end

${GLOBAL}`,
  verify: `Usage: entity-git verify [--session ID] [--full] [--quiet-time T] [--json]

Compare every session's repository (or one) with its DAG by node ids and trailers. Writes
nothing. Prints each session and what differs; exit 0 when all are equal, 1 on any difference.
(extra-branch is reported but does not fail verification.) A session whose change
marker and refs equal what its last sync recorded is reported ok without reading its DAG or its
objects; --full compares every session in full.

Options:
  --session ID   only this session
  --full         compare every session in full (objects too), not only those that changed
  --quiet-time T as for sync: what counts as complete in an application's database (default 5m)
  --json         print the report as JSON

${GLOBAL}`,
  push: `Usage: entity-git push --remote URL [--session ID] [--json]

Push every branch of each session repository (every session of the database, or one) over
smart HTTP. URL contains {session}, replaced by the session's directory name. Credentials come
from ENTITY_GIT_REMOTE_TOKEN (and ENTITY_GIT_REMOTE_USER, default entity-git), never from the
URL. Only refs whose value differs are sent; branches move by fast-forward only. Exit 1 if a
session failed.

What would be sent (the commits the host lacks: their messages and files) is scanned for
secrets first, with the detector set of the config's "redaction" (default: secretlint's
recommended preset); a session holding any is not pushed (SECRETS_FOUND, naming rule, commit,
file and line, never the secret). --allow-secrets pushes it anyway.

${REMOTE_OPTIONS}  --allow-secrets  push even what holds secrets

${GLOBAL}`,
  scan: `Usage: entity-git scan [--session ID] [--json]

Scan every session repository under --root (or one session's), in every commit of every branch
and the meta ref, for secrets: each commit's message, and each file a commit adds or changes
(a file carried on unchanged is reported once, where it came in; JSON strings are read decoded
too). Prints rule, session, commit, file and line for each — never the secret. Any repository
will do, one written before redaction was on or changed by plain git. Detector set: the
config's "redaction" (default: secretlint's recommended preset). Exit 0 when nothing is found,
1 when something is.

Options:
  --session ID   only this session's repository
  --json         print { ok, repositories, findings } as JSON

${GLOBAL}`,
  export: `Usage: entity-git export SESSION --format md|html|jsonl [--branch B] [--turn N] [-o FILE]

A branch of a session (default: HEAD's) from its first turn to --turn N (default: all), read
from the session's repository: md is Markdown, html one self-contained page (no script, nothing
fetched), both with turns, roles, tool calls and results folded, tokens, times and each turn's
commit; jsonl is one node per line. Redacted with the config's "redaction" (default:
secretlint's recommended preset), even when the repository was written without it.

Options:
  --format F         md, html or jsonl (required)
  --branch B         the branch (default: HEAD's)
  --turn N           the last turn exported (default: the branch's tip)
  -o, --output FILE  write the file there (default: standard output)
  --commit-url URL   link each turn's commit: {commit} is replaced by its id

${GLOBAL}`,
  restore: `Usage: entity-git restore --remote URL [--session ID] [--json]
       entity-git clone --remote URL [--session ID] [--json]     (the same command)

Rebuild session repositories under --root from the git host alone (a fresh machine): every
session of the database, or one. Afterwards entity-git verify is clean and sync finds nothing
to do. A session that already has a repository is brought up to date; one the host lacks is
reported missing (sync backfills it from the DAG). URL and credentials as for push. Exit 1 if a
session failed.

${REMOTE_OPTIONS}
${GLOBAL}`,
  log: `Usage: entity-git log SESSION [--branch B] [--json]
       entity-git log --project PROJECT [--json]

The commits of a branch of SESSION (default: HEAD's branch), newest first, one per turn.
With --project: the agent's auto-commits in the project's own repository, newest first.

Options:
  --branch B         another branch (see entity-git branches SESSION)
  --project PROJECT  a project id or name (see entity-git projects list)
  --json             print the commits as JSON, with the trailers

${GLOBAL}`,
  show: `Usage: entity-git show SESSION [TURN|SHA] [--branch B] [--json]

The session as it stood at one commit, read from git objects (the working tree is not touched):
turn N of M on the branch, the previous and next turn's commits, and the messages.

  TURN   a turn number on HEAD's branch, or on --branch
  SHA    a commit id: 40 hex digits, or a unique prefix of at least 4
         (a number that is no turn of the branch is tried as a prefix)
         default: the tip of the branch

Options:
  --branch B     the branch for turn numbers and prev/next
  --json         print the view as JSON

${GLOBAL}`,
  branches: `Usage: entity-git branches SESSION [--json]

The branches of SESSION with their tip and turn count; * marks HEAD's. main follows the first
answer at every fork; retry-<id> and fork-<id> are the others.

Options:
  --json         print the branches as JSON

${GLOBAL}`,
  stats: `Usage: entity-git stats SESSION [--branch B] [--json]

Tokens per turn, per branch and for the whole session (a node shared by branches counted once),
and cost where the source records it (metadata.cost or metadata.usage.cost, in the source's own
unit). Read from the database as the mirror derives its turns and branches; a turn already synced
names its commit.

Options:
  --branch B     one branch only (the session's total stays the whole session's)
  --json         print the figures as JSON

${GLOBAL}`,
  prune: `Usage: entity-git prune [--dry-run] [--archive DIR] [--all] [--json]

The database is the source of truth: when the application deletes a session, prune removes its
repository under the root. Each is checked first: a directory that is not an entity-git session
repository, or whose session the database still holds, is never touched.

Options:
  --dry-run      report what would go; change nothing
  --archive DIR  first write each repository to DIR as <dir>.bundle (native git), which
                 "git clone" reads back with every branch and commit id; removed only after
  --all          go on when the database holds none of the sessions under the root (refused
                 otherwise: a wrong --db looks like that)
  --json         print the report as JSON

${GLOBAL}`,
  du: `Usage: entity-git du [--json]

The disk each session repository under the root takes (as du(1) counts it), largest first, and
the total; sessions the database deleted are marked (entity-git prune removes them).

Options:
  --json         print the sizes as JSON: bytes (apparent, du -b) and disk (allocated, du -B1)

${GLOBAL}`,
  projects: `Usage: entity-git projects list [--json]
       entity-git projects create NAME WORKDIR [--description TEXT] [--json]
       entity-git projects add-session PROJECT SESSION [--json]
       entity-git projects status PROJECT [active|paused|done] [--json]
       entity-git projects import DIR [--apply] [--json]
       entity-git projects revert SESSION TURN [--commit SHA] [--project PROJECT] [--json]
       entity-git projects diff SESSION TURN [PATH] [--project PROJECT] [--json]
       entity-git projects restore SESSION TURN [PATH] [--undo SNAPSHOT] [--project PROJECT] [--json]
       entity-git projects mode PROJECT [shadow|auto-commit] [--json]

A project is a user's working directory whose files the agent edits; a session may belong to one.

  list          every project, oldest first, with its sessions
  create        a new project (status active); WORKDIR must be an existing directory,
                given as an absolute path
  add-session   bind SESSION to PROJECT (an id or a name); a session belongs to at most one
                project, so this moves it from another
  status        show a project's status, or set it (paused and done get no agent auto-commit)
  import        a project for each git repository under DIR that is none yet (a dry run
                unless --apply)
  revert        undo the agent's commit of a turn of SESSION in its project
  diff          the files turn TURN changed, from the project's shadow snapshots, or one file's diff
  restore       put the files turn TURN changed back to their state before it
  mode          show the project's mode, or choose it: shadow (the default: every turn's files
                snapshotted outside your repository) or auto-commit (also committed into it)

${GLOBAL}`,
};
COMMAND_HELP['projects list'] = `Usage: entity-git projects list [--json]

Every project, oldest first: id, name, status, workdir and its sessions.

Options:
  --json         print the projects as JSON

${GLOBAL}`;
COMMAND_HELP['projects create'] = `Usage: entity-git projects create NAME WORKDIR [--description TEXT] [--json]

Create a project (status active). WORKDIR must be an existing directory given as an absolute
path (the agent's process resolves it, not this shell); NAME must be unused.

Options:
  --description TEXT   a description
  --json               print the new project as JSON

${GLOBAL}`;
COMMAND_HELP['projects status'] = `Usage: entity-git projects status PROJECT [active|paused|done] [--json]

Show PROJECT's status (a project id, or else its name), or set it. The agent auto-commits in
an active project only: paused and done projects keep their sessions, with no commit made.

Options:
  --json         print the project as JSON

${GLOBAL}`;
COMMAND_HELP['projects import'] = `Usage: entity-git projects import DIR [--apply] [--json]

Existing git projects imported as Projects: every git working tree at or under DIR (an absolute
path; 3 levels deep; hidden and dependency folders skipped) whose directory is no project yet
gets one, named after its directory. Without --apply this is a dry run: it prints the plan and
writes nothing. Nothing is ever written in the repositories.

Options:
  --apply        create the planned projects
  --json         print the plan (or what was created) as JSON

${GLOBAL}`;
COMMAND_HELP['projects diff'] = `Usage: entity-git projects diff SESSION TURN [PATH] [--project PROJECT] [--json]

The files turn TURN of SESSION changed in its project, from the project's shadow snapshots taken
before and after the turn (under ROOT/.shadow): each path with its status, added and removed
lines, and who changed it (tools: the agent's own tools reported it; other: its shell, another
program or you). With PATH, that file's unified diff across the turn.

Options:
  --project PROJECT    the project (an id or a name), when it is not the session's own
  --json               print the files (or the diff) as JSON

${GLOBAL}`;
COMMAND_HELP['projects restore'] =
  `Usage: entity-git projects restore SESSION TURN [PATH] [--undo SNAPSHOT] [--project PROJECT] [--json]

Put the files turn TURN of SESSION changed (or only PATH) back to their state before the turn.
A file someone other than the agent changed since (after the newest snapshot, or between turns)
is skipped and listed, never overwritten; files no turn changed are never touched; no branch
moves. The work tree is snapshotted first, so the restore can be undone: --undo SNAPSHOT (the id
the restore printed) puts back what it changed.

Options:
  --undo SNAPSHOT      undo an earlier restore
  --project PROJECT    the project (an id or a name), when it is not the session's own
  --json               print what was restored and skipped as JSON

${GLOBAL}`;
COMMAND_HELP['projects mode'] = `Usage: entity-git projects mode PROJECT [shadow|auto-commit] [--json]

Show PROJECT's mode (an id or a name), or choose it. shadow, the default: every turn's files are
snapshotted, before and after the turn, in a private repository under ROOT/.shadow, never in
yours. auto-commit: the same, and the agent's edits are also committed into your repository after
each turn (docs/design.md §7). Both keep projects diff and projects restore working.

Options:
  --json         print the project's mode and size cap as JSON

${GLOBAL}`;
COMMAND_HELP['projects revert'] =
  `Usage: entity-git projects revert SESSION TURN [--commit SHA] [--project PROJECT] [--json]

Undo what the agent committed for turn TURN of SESSION in the session's project: only the agent's
own commit of that turn (found by its Session: and Turn: trailers; the newest on the current
branch), never a commit of yours. When it is the tip of the branch, was never pushed (no
remote-tracking ref has it) and nothing is uncommitted, the branch moves back over it and its
files return to what they were (the reflog keeps the commit). Otherwise a new commit takes it
back: "[agent SESSION] revert turn TURN: …", with a Reverts: trailer. Refused, with nothing
touched (exit 1), when a later commit changed one of its files, you have uncommitted changes on
them, a merge or rebase is in progress, HEAD is detached, or another git holds the index lock.
Undoing twice does nothing and says so.

Options:
  --commit SHA         the agent commit itself (40 hex digits); with TURN it must be that turn's
  --project PROJECT    the project (an id or a name), when it is not the session's own
  --json               print what was done as JSON

${GLOBAL}`;
COMMAND_HELP['projects add-session'] = `Usage: entity-git projects add-session PROJECT SESSION [--json]

Bind SESSION to PROJECT (a project id, or else its name). A session belongs to at most one
project: adding it to another moves it.

Options:
  --json         print the project as JSON, with its sessions

${GLOBAL}`;
Object.assign(COMMAND_HELP, IMPORT_HELP);
COMMAND_HELP.watch = `Usage: entity-git watch [--interval MS] [--channel NAME] [--quiet-time T] [--json]

Mirror the database continuously, for an application in any language that writes it: every
session at start, then each session the database shows changed, one sync per session at a time
(with retries). SQLite is watched with PRAGMA data_version (no table scan while nothing changes);
PostgreSQL with LISTEN when a channel is given (the writer runs NOTIFY <channel>, '<session id>'
after its commit), by polling otherwise. SIGINT or SIGTERM: a last look, every queued sync
finishes, exit 0. Nothing is written to the database.

Options:
  --interval MS    how often to look (default 100; with --channel, the longest wait)
  --channel NAME   PostgreSQL: the LISTEN channel (default: notifyChannel of --config)
  --quiet-time T   a session of an application's database quiet for T has its open turns
                   committed (default 5m)
  --json           one JSON object per line: watching, committed, stopped

${GLOBAL}`;
