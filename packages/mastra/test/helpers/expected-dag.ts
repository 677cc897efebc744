import { MemoryDag, type JsonValue } from '@entity-git/core';
import type { MastraStorage } from '@mastra/core/storage';

type Json = { [key: string]: JsonValue };
const copy = <T>(v: T): T => JSON.parse(JSON.stringify(v));

/**
 * The DAG the package README's mapping gives for these threads, written from what Mastra's own
 * API returns (`getThreadById`, `getMessages({ format: 'v2' })`) rather than from the rows, for
 * format-2 threads whose messages carry no other resource: mirrored, it gives the commit ids a
 * mirror of `MastraDag` must give.
 */
export async function expectedDag(storage: MastraStorage, threadIds: readonly string[]): Promise<MemoryDag> {
  const dag = new MemoryDag();
  for (const threadId of threadIds) {
    const thread = (await storage.getThreadById({ threadId }))!;
    const metadata: Json = { resourceId: thread.resourceId };
    if (thread.metadata) metadata.metadata = copy(thread.metadata) as Json;
    await dag.createSession({
      id: thread.id,
      title: thread.title ?? null,
      agent_id: 'mastra',
      created_at: thread.createdAt.getTime() / 1000,
      metadata,
    });
    let previous: string | null = null;
    for (const m of await storage.getMessages({ threadId, format: 'v2' })) {
      const created_at = m.createdAt.getTime() / 1000;
      const parts = copy(m.content.parts) as Json[];
      const results: Json[] = [];
      for (const p of parts) {
        if (p.type !== 'tool-invocation') continue;
        const { result, ...call } = p.toolInvocation as Json;
        p.toolInvocation = call;
        if (result !== undefined) results.push({ ...call, result });
      }
      const meta: Json = {};
      const own = m.content.metadata as Json | undefined;
      if (own) {
        meta.metadata = copy(own);
        const usage = own.usage as Json | undefined;
        if (typeof usage?.totalTokens === 'number') meta.tokens = usage.totalTokens;
      }
      await dag.appendNode({
        id: m.id,
        session_id: threadId,
        role: m.role,
        content: parts,
        predecessor: previous,
        created_at,
        metadata: Object.keys(meta).length ? meta : null,
      });
      for (const r of results)
        await dag.appendNode({
          id: `${m.id}.${r.toolCallId}`,
          session_id: threadId,
          role: 'tool',
          content: r.result!,
          predecessor: m.id,
          caller: m.id,
          created_at,
          metadata: { tool: r.toolName!, toolCallId: r.toolCallId! },
        });
      previous = m.id;
    }
  }
  return dag;
}
