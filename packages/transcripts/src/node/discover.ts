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
