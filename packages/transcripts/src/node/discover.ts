import { readdir, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** `~/.claude/projects`, where Claude Code keeps one directory of transcripts per project. */
export function defaultClaudeProjectsDir(): string {
  return join(homedir(), '.claude', 'projects');
}

/** `~/.codex/sessions` (or `$CODEX_HOME/sessions`), where Codex CLI keeps its rollouts by date. */
export function defaultCodexSessionsDir(): string {
  return join(process.env.CODEX_HOME ?? join(homedir(), '.codex'), 'sessions');
}

/** `~/.gemini/tmp`, where Gemini CLI keeps `<project>/chats/` session files. */
export function defaultGeminiDir(): string {
  return join(homedir(), '.gemini', 'tmp');
}

/**
 * The Gemini CLI session files under `dir` (`<project>/chats/session-….jsonl`, the older
 * `.json`, a sub-agent's `chats/<parent id>/<id>.jsonl`), or one file; sorted. Only files under a
 * `chats` directory are sessions (the project directories hold other files).
 */
export async function findGeminiSessions(dir: string): Promise<string[]> {
  const st = await stat(dir);
  if (st.isFile()) return [dir];
  const out: string[] = [];
  const walk = async (d: string, depth: number, inChats: boolean): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isFile() && inChats && /\.jsonl?$/.test(e.name)) out.push(p);
      else if (e.isDirectory() && depth < 5) await walk(p, depth + 1, inChats || e.name === 'chats');
    }
  };
  await walk(dir, 1, false);
  return out.sort();
}

/**
 * The transcripts under `dir` (every `.jsonl` file), sorted by path, or `dir` itself when it is a
 * file: Claude Code's projects directory (`<project-key>/<session>.jsonl`, and sub-agents under
 * `<project-key>/<session>/subagents/`) or one project's directory, Codex CLI's sessions directory
 * (`YYYY/MM/DD/rollout-….jsonl`). Depth is bounded (4) so a stray link loop cannot walk forever.
 */
export async function findTranscripts(dir: string): Promise<string[]> {
  const st = await stat(dir);
  if (st.isFile()) return [dir];
  const out: string[] = [];
  const walk = async (d: string, depth: number): Promise<void> => {
    const entries = await readdir(d, { withFileTypes: true });
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isFile() && e.name.endsWith('.jsonl')) out.push(p);
      else if (e.isDirectory() && depth < 4) await walk(p, depth + 1);
    }
  };
  await walk(dir, 1);
  return out.sort();
}
