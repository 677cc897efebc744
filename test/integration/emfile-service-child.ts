// Runs with a low open-files limit, through the mirror service (concurrency 1): descriptors
// exhausted, session A notified — retried, then `failed` (EMFILE). Then A notified again, and at
// its first `retrying` some descriptors are freed and session B notified: A's retry and B both
// succeed. Prints every event in order.
import { createMirrorService, MemoryDag } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { writeGolden } from '@entity-git/test-utils';
import { closeSync, openSync } from 'node:fs';

const [root, a, b] = process.argv.slice(2) as [string, string, string];
const dag = new MemoryDag();
await writeGolden(dag, { sessionId: a });
await writeGolden(dag, { sessionId: b });
const mirror = createNodeMirror({ dag, root });
const service = createMirrorService({ mirror, concurrency: 1, attempts: 3, baseDelayMs: 50 });
const events: unknown[] = [];
const fds: number[] = [];
let phase = 1;
service.on('retrying', (e) => {
  events.push(['retrying', e.sessionId, e.error.code, e.error.data.fsCode ?? null, e.attempt]);
  if (phase === 2 && e.sessionId === a && fds.length > 0) {
    for (const fd of fds.splice(0)) closeSync(fd);
    events.push(['descriptors freed']);
    service.notify(b);
  }
});
service.on('failed', (e) =>
  events.push(['failed', e.sessionId, e.error.code, e.error.data.fsCode ?? null, e.attempts]),
);
service.on('committed', (e) => events.push(['committed', e.sessionId, e.result.branchesMoved]));
try {
  for (;;) fds.push(openSync('/dev/null', 'r'));
} catch (err) {
  if ((err as NodeJS.ErrnoException).code !== 'EMFILE') throw err;
}
const exhausted = fds.length;
service.notify(a);
await service.drain();
phase = 2;
service.notify(a);
await service.drain();
for (const fd of fds) closeSync(fd);
process.stdout.write(JSON.stringify({ exhausted, events }));
