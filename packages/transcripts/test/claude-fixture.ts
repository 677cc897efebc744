// Synthetic Claude Code transcripts, written from the public descriptions of the format: every
// record here is made up by this builder (no real transcript is copied).

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Block = { thinking: string } | { text: string } | { tool: string; input?: Json };

const SESSION = '5e55ion0-0000-4000-8000-000000000001';

/** Builds the JSONL lines of one session, with deterministic uuids and times. */
export class ClaudeTranscript {
  readonly records: Json[] = [];
  private counter = 0;
  private msgCounter = 0;
  private toolCounter = 0;
  private clock = Date.UTC(2026, 0, 2, 3, 4, 5);

  constructor(
    readonly sessionId = SESSION,
    readonly cwd = '/home/dev/project',
    /** The `version` every record names (older versions wrote no final stop_reason, nor turn-end records). */
    readonly version = '2.0.0',
  ) {}

  uuid(): string {
    this.counter++;
    return `00000000-0000-4000-8000-${this.counter.toString(16).padStart(12, '0')}`;
  }

  private base(type: string, parentUuid: string | null, extra: { [key: string]: Json } = {}): { [key: string]: Json } {
    this.clock += 1500;
    return {
      parentUuid,
      isSidechain: false,
      userType: 'external',
      cwd: this.cwd,
      sessionId: this.sessionId,
      version: this.version,
      gitBranch: 'main',
      type,
      uuid: this.uuid(),
      timestamp: new Date(this.clock).toISOString(),
      ...extra,
    };
  }

  /** A user prompt; returns its uuid. */
  user(text: Json, parent: string | null, extra: { [key: string]: Json } = {}): string {
    const r = this.base('user', parent, { message: { role: 'user', content: text }, ...extra });
    this.records.push(r);
    return r.uuid as string;
  }

  /**
   * One model response split over one record per block (as Claude Code logs it), chained by
   * parentUuid. Returns the record uuids and the tool_use ids.
   */
  response(
    parent: string,
    blocks: Block[],
    options: { stop?: string | null; sidechain?: boolean; model?: string } = {},
  ): { records: string[]; tools: string[]; last: string } {
    const id = `msg_${(++this.msgCounter).toString().padStart(4, '0')}`;
    const records: string[] = [];
    const tools: string[] = [];
    let p = parent;
    blocks.forEach((b, i) => {
      let block: Json;
      if ('thinking' in b) block = { type: 'thinking', thinking: b.thinking, signature: 'sig' };
      else if ('text' in b) block = { type: 'text', text: b.text };
      else {
        const toolId = `toolu_${(++this.toolCounter).toString().padStart(4, '0')}`;
        tools.push(toolId);
        block = { type: 'tool_use', id: toolId, name: b.tool, input: b.input ?? {} };
      }
      const last = i === blocks.length - 1;
      const r = this.base('assistant', p, {
        isSidechain: options.sidechain ?? false,
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model: options.model ?? 'claude-test-1',
          content: [block],
          stop_reason: last ? (options.stop === undefined ? null : options.stop) : null,
          stop_sequence: null,
          usage: { input_tokens: 10, output_tokens: 5 * (i + 1), cache_read_input_tokens: 100 },
        },
        requestId: `req_${this.msgCounter}`,
      });
      this.records.push(r);
      records.push(r.uuid as string);
      p = r.uuid as string;
    });
    return { records, tools, last: p };
  }

  /** One tool result record; `parent` is the record the result names as parentUuid. */
  result(
    toolUseId: string,
    parent: string,
    content: Json,
    options: { source?: string; sidechain?: boolean } = {},
  ): string {
    const r = this.base('user', parent, {
      isSidechain: options.sidechain ?? false,
      message: { role: 'user', content: [{ tool_use_id: toolUseId, type: 'tool_result', content }] },
      toolUseResult: { stdout: 'omitted' },
      ...(options.source ? { sourceToolAssistantUUID: options.source } : {}),
    });
    this.records.push(r);
    return r.uuid as string;
  }

  /** A record that is no conversation node. */
  bookkeeping(type: 'file-history-snapshot' | 'summary' | 'queue-operation'): void {
    this.clock += 10;
    if (type === 'summary')
      this.records.push({
        type,
        summary: 'A made-up summary',
        leafUuid: `00000000-0000-4000-8000-${this.counter.toString(16).padStart(12, '0')}`,
      });
    else if (type === 'queue-operation')
      this.records.push({
        type,
        operation: 'dequeue',
        timestamp: new Date(this.clock).toISOString(),
        sessionId: this.sessionId,
      });
    else
      this.records.push({
        type,
        messageId: this.uuid(),
        snapshot: { trackedFileBackups: {} },
        isSnapshotUpdate: false,
      });
  }

  /** A system record (turn_duration, stop_hook_summary, compact_boundary…); returns its uuid. */
  system(subtype: string, parent: string | null, extra: { [key: string]: Json } = {}): string {
    const r = this.base('system', parent, {
      subtype,
      content: subtype === 'compact_boundary' ? 'Conversation compacted' : '',
      level: 'info',
      ...extra,
    });
    this.records.push(r);
    return r.uuid as string;
  }

  /** The parallel-call shape: each result names the tool_use record of its own call as parent. */
  parallel(
    parent: string,
    tools: string[],
    text = 'Looking.',
  ): { response: string[]; results: string[]; last: string } {
    const r = this.response(parent, [
      { thinking: 'plan' },
      { text },
      ...tools.map((t) => ({ tool: t, input: { pattern: t } })),
    ]);
    const results = r.tools.map((id, i) =>
      this.result(id, r.records[2 + i]!, `result of ${tools[i]} #${i + 1}`, { source: r.records[2 + i]! }),
    );
    return { response: r.records, results, last: results.at(-1)! };
  }

  text(): string {
    return this.records.map((r) => `${JSON.stringify(r)}\n`).join('');
  }

  /** Each record's line, its newline included. */
  lines(): string[] {
    return this.records.map((r) => `${JSON.stringify(r)}\n`);
  }

  bytes(): Uint8Array {
    return new TextEncoder().encode(this.text());
  }
}
