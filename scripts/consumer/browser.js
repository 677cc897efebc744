// The consumer's page (scripts/consumer-check.mjs builds it with vite): core + browser-fs with a
// mirror, the smallest app that writes and replays a session in the browser.
import { MemoryDag } from '@entity-git/core';
import { createBrowserMirror } from '@entity-git/browser-fs';

const dag = new MemoryDag();
await dag.createSession({ id: 's1', title: 'In the browser' });
const u1 = await dag.appendNode({ id: 'u1', session_id: 's1', role: 'user', content: 'hello' });
await dag.appendNode({ id: 'a1', session_id: 's1', role: 'assistant', content: 'hi', predecessor: u1.id });
const mirror = createBrowserMirror({ dag });
const result = await mirror.sync('s1');
const [tip] = await mirror.log('s1');
document.body.textContent = JSON.stringify({ result, tip, view: tip && (await mirror.read('s1', tip.sha)) });
