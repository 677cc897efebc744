import { MemorySaver } from '@langchain/langgraph-checkpoint';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { createLangGraphDag, type LangGraphDag } from '../../src/index.js';
import { runTrip } from './trip.js';

/** The trip run by the real LangGraph.js on a `MemorySaver`: its saver, and the DAG over it (for other packages' tests). */
export async function memoryTrip(): Promise<{ saver: MemorySaver; dag: LangGraphDag }> {
  const saver = new MemorySaver();
  await runTrip(saver);
  return { saver, dag: createLangGraphDag({ saver }) };
}

/** The trip run by the real LangGraph.js on a `SqliteSaver` file, closed after. */
export async function sqliteTrip(file: string): Promise<void> {
  const saver = SqliteSaver.fromConnString(file);
  await runTrip(saver);
  saver.db.close();
}
