import {
  TableNode,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';

/**
 * A kysely plugin that records how many rows each SELECT on `table` returned, in order: the
 * pager's batches as the database served them, measured at the driver boundary.
 */
export function rowCounter(table: string): { plugin: KyselyPlugin; batches: number[] } {
  const batches: number[] = [];
  const watched = new Set<string>();
  const plugin: KyselyPlugin = {
    transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
      const node = args.node;
      if (
        node.kind === 'SelectQueryNode' &&
        node.from?.froms.some((f) => TableNode.is(f) && f.table.identifier.name === table)
      ) {
        watched.add(args.queryId.queryId);
      }
      return node;
    },
    async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      if (watched.delete(args.queryId.queryId)) batches.push(args.result.rows.length);
      return args.result;
    },
  };
  return { plugin, batches };
}
