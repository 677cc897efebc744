import { createNodeMirror } from '@entity-git/node-fs';
import type { Identity } from '@entity-git/git';
import type { Layout } from '@entity-git/core';
import { CliError } from '../cli-error.js';
import type { Context } from '../context.js';
import { EXIT_USAGE } from '../exit-codes.js';
import { watchFrameworkChanges } from './framework-changes.js';
import { openFrameworkStore } from './framework-store.js';

export interface FrameworkContextOptions {
  /** An absolute SQLite file or a `postgres://` URL. */
  db: string;
  engine: 'sqlite' | 'postgres';
  /** The command writes rows (projects, imports): refused, a framework's store is only read. */
  writes: boolean;
  root: string;
  identity: Identity;
  layout: Layout | undefined;
  warn: (line: string) => void;
}

/**
 * The context of a command on a framework's store (LangGraph's checkpointers, Mastra's storage),
 * or null when the database is none. Such a store is opened read-only and never written: a
 * command that writes rows is refused, and it has no projects (entity-git's own tables).
 */
export async function openFrameworkContext(options: FrameworkContextOptions): Promise<Context | null> {
  const framework = await openFrameworkStore(options);
  if (framework === null) return null;
  const what = framework.schema.name === 'langgraph' ? 'a LangGraph checkpoint store' : "Mastra's storage";
  if (options.writes) {
    await framework.close();
    throw new CliError(`the database is ${what}, which entity-git reads and never writes`, EXIT_USAGE);
  }
  const mirror = createNodeMirror({
    dag: framework.dag,
    root: options.root,
    identity: options.identity,
    ...(options.layout ? { layout: options.layout } : {}),
  });
  return {
    dag: framework.dag,
    recognised: framework.schema.name,
    reading: `recognised the ${JSON.stringify(framework.schema.name)} schema: ${framework.schema.description}; read as it is, never written`,
    projects: null,
    config: {},
    // A framework's store has no quiet time: its checkpoints say when a turn is done.
    async watch({ channel }) {
      if (channel !== undefined)
        throw new CliError(`--channel is for entity-git's own tables (${framework.schema.name}'s store is polled)`);
      return watchFrameworkChanges(framework);
    },
    mirror,
    root: options.root,
    close: () => framework.close(),
  };
}
