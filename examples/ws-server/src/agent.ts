// The agent that replies to a message sent from the app, and the tools it gets for one turn in the
// session's project workdir (every path they write is the turn's own edit for the auto-commit).
import {
  invalidArgument,
  isEntityGitError,
  type DagNode,
  type JsonValue,
  type Project,
  type Session,
} from '@entity-git/core';
import { gitBlobId } from '@entity-git/git';
import { constants } from 'node:fs';
import { mkdir, open, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { confinedPath } from './agent-paths.js';

/**
 * The tools an agent gets for one turn. They work in the session's project workdir, and every path
 * written is reported to the project auto-commit as the turn's own edit. Without a project they
 * throw (`INVALID_ARGUMENT`): check `input.project` first.
 */
export interface AgentTools {
  /** Write a UTF-8 file at a path relative to the workdir (parents created; no `..`, nothing in `.git`). */
  writeFile(path: string, content: string): Promise<void>;
  /** A UTF-8 file relative to the workdir, or null when it does not exist. */
  readFile(path: string): Promise<string | null>;
}

export interface AgentInput {
  session: Session;
  message: DagNode;
  /** The project the session is bound to, or null. */
  project: Pick<Project, 'id' | 'name' | 'workdir' | 'status'> | null;
  tools: AgentTools;
}

/** Replies to a message sent from the app; null for no reply. The example has no model. */
export type Agent = (input: AgentInput) => JsonValue | null | Promise<JsonValue | null>;

/** The file the echo agent keeps in a project's workdir, one line per message. */
export const ECHO_NOTES_FILE = 'agent-notes.md';

/**
 * An agent that says what it was told: enough to see a fork become a conversation. In a session
 * bound to a project it also notes the message in {@link ECHO_NOTES_FILE} in the workdir, so the
 * turn has an edit for the project auto-commit.
 */
export const echoAgent: Agent = async ({ session, message, project, tools }) => {
  const text = typeof message.content === 'string' ? message.content : JSON.stringify(message.content);
  let noted = '';
  if (project !== null) {
    try {
      const before = (await tools.readFile(ECHO_NOTES_FILE)) ?? '# Notes from the echo agent\n\n';
      await tools.writeFile(ECHO_NOTES_FILE, `${before}- ${session.id}: ${text.replace(/\s+/g, ' ').trim()}\n`);
      noted = ` I noted it in ${ECHO_NOTES_FILE}.`;
    } catch (err) {
      // A refused path (a link out of the workdir, say) is the agent's to report, not a failed turn.
      if (!isEntityGitError(err, 'INVALID_ARGUMENT')) throw err;
      noted = ` I could not note it: ${(err as Error).message}`;
    }
  }
  return `You said: ${text} — (the example server's echo agent; no model is connected)${noted}`;
};

/** The agent's tools for one turn in `project`'s workdir; `touched` collects what they wrote. */
export const toolsFor = (project: Project | null, touched: string[], written: Record<string, string>): AgentTools => {
  const place = async (path: string): Promise<string> => {
    if (project === null) return invalidArgument('the session has no project: its agent has no workdir to write in');
    return confinedPath(project.workdir, path);
  };
  return {
    async writeFile(path, content) {
      const full = await place(path);
      await mkdir(dirname(full), { recursive: true });
      // O_NOFOLLOW: a link made at the last component since the check is not followed either.
      const handle = await open(
        full,
        constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW,
        0o644,
      );
      try {
        await handle.writeFile(content, 'utf8');
      } finally {
        await handle.close();
      }
      if (!touched.includes(full)) touched.push(full);
      // The bytes this tool left: an edit of the same file by the user during the turn then blocks.
      written[full] = gitBlobId(content);
    },
    async readFile(path) {
      const full = await place(path);
      return readFile(full, 'utf8').catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return null;
        throw err;
      });
    },
  };
};
