import { createNodeMirror } from '@entity-git/node-fs';
import type { Identity } from '@entity-git/git';
import type { Layout } from '@entity-git/core';
import type { SqlStore } from '@entity-git/sqlite';
import { CliError } from '../cli-error.js';
import type { Context } from '../context.js';
import { EXIT_USAGE } from '../exit-codes.js';
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
 * command that writes rows is refused, and `ctx.store` (entity-git's own tables, its projects)
 * does not exist.
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
    get store(): SqlStore {
      throw new CliError(
        `the database is ${what}: it has no entity-git tables (projects live in entity-git's own database)`,
      );
    },
    dag: framework.dag,
    recognised: framework.schema.name,
    framework,
    config: {},
    mirror,
    root: options.root,
    close: () => framework.close(),
  };
}
