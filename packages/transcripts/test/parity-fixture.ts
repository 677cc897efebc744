// The transcripts Node and Chromium must mirror to the same commit ids: a Claude Code session
// with parallel calls, a regenerated reply, an edited prompt, a compaction, an inline sidechain
// and non-BMP text, and an OpenAI-style log. Pure (no node:*), so both sides build the same bytes.
import { ClaudeTranscript } from './claude-fixture.js';

export const PARITY_SESSION = 'pa417y00-0000-4000-8000-0000000000aa';
export const PARITY_LOG = 'parity-log';

export function parityClaude(): Uint8Array {
  const t = new ClaudeTranscript(PARITY_SESSION);
  t.bookkeeping('queue-operation');
  const u1 = t.user('map the repo 🗺️ 𝔁', null);
  const p = t.parallel(u1, ['Glob', 'Read', 'Grep', 'Grep', 'Bash']);
  const reply = t.response(p.last, [{ text: 'Mapped. 𝄞' }], { stop: 'end_turn' });
  t.response(p.last, [{ text: 'Mapped, differently.' }], { stop: 'end_turn' });
  const u2 = t.user('now delegate', reply.last);
  const x = t.response(u2, [{ tool: 'Task', input: { prompt: 'sub' } }]);
  const su = t.user('sub', null, { isSidechain: true });
  const sa = t.response(su, [{ text: 'sub result' }], { sidechain: true });
  void sa;
  const back = t.result(x.tools[0]!, x.last, 'sub result');
  const y = t.response(back, [{ text: 'Delegated.' }], { stop: 'end_turn' });
  const boundary = t.system('compact_boundary', null, { logicalParentUuid: y.last });
  const s = t.user('Summary of the conversation so far.', boundary, { isCompactSummary: true });
  const z = t.response(s, [{ text: 'Continuing after compaction.' }], { stop: 'end_turn' });
  t.user('edited: finish', z.last);
  const u4 = t.user('finish', z.last);
  const end = t.response(u4, [{ text: 'Finished 🎉' }]);
  t.system('turn_duration', end.last);
  return t.bytes();
}

export function parityLog(): Uint8Array {
  return new TextEncoder().encode(
    JSON.stringify([
      { role: 'system', content: 'Be brief.', created_at: 1767312000 },
      { role: 'user', content: 'Weather in Tromsø? ❄️' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: '-12 °C' },
      { role: 'assistant', content: 'Cold: -12 °C.', created_at: 1767312009 },
    ]),
  );
}
