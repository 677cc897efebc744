import { EntityGitError } from '@entity-git/core';

/** Mastra's table of threads. */
export const THREADS_TABLE = 'mastra_threads';
/** Mastra's table of messages. */
export const MESSAGES_TABLE = 'mastra_messages';

/** The two tables as kysely names them: schema-qualified when a schema is given. */
export interface MastraTables {
  threads: string;
  messages: string;
}

/**
 * The tables' names in `schema` (PostgreSQL: the `schemaName` given to Mastra's `PostgresStore`;
 * absent: the search path's, `public` by default). `INVALID_OPTION` for a schema that is not a
 * plain name (kysely splits a qualified name at its dot).
 */
export function mastraTables(schema: string | undefined): MastraTables {
  if (schema === undefined) return { threads: THREADS_TABLE, messages: MESSAGES_TABLE };
  if (typeof schema !== 'string' || schema === '' || schema.includes('.') || /[\u0000"]/.test(schema))
    throw new EntityGitError('INVALID_OPTION', '[mastra] schema must be a non-empty name without ".", \'"\' or NUL', {
      schema,
    });
  return { threads: `${schema}.${THREADS_TABLE}`, messages: `${schema}.${MESSAGES_TABLE}` };
}
