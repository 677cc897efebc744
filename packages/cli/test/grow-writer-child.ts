// A process that grows sessions in a SQLite DAG, as a dispatcher does while `entity-git sync`
// processes run (concurrent-sync.test.ts): ROUNDS rounds, each appending one whole turn (user,
// assistant) to every session, every fourth round a retry of the previous user message (a new
// branch), the head moved to the new turn. Deterministic rows: ids, contents and times depend only
// on the session and the round. Prints "done" when all are written.
import { openSqlite } from '@entity-git/sqlite';

const [file, sessionsArg, roundsArg] = process.argv.slice(2) as [string, string, string];
const sessions = sessionsArg.split(',');
const rounds = Number(roundsArg);
const store = await openSqlite({ file });
const T0 = 1779800000;
try {
  const lastUser = new Map<string, string>();
  const lastAssistant = new Map<string, string | null>();
  for (const s of sessions) {
    lastUser.set(s, `${s}-u0`);
    lastAssistant.set(s, `${s}-a0`);
  }
  for (let r = 1; r <= rounds; r++) {
    for (const s of sessions) {
      const retry = r % 4 === 0;
      // A retry answers the previous user message again; otherwise a new user message follows the last answer.
      const user = retry ? lastUser.get(s)! : `${s}-u${r}`;
      if (!retry)
        await store.writer.appendNode({
          id: user,
          session_id: s,
          role: 'user',
          content: `question ${r} of ${s}`,
          predecessor: lastAssistant.get(s)!,
          created_at: T0 + r * 10,
        });
      const answer = `${s}-a${r}`;
      await store.writer.appendNode({
        id: answer,
        session_id: s,
        role: 'assistant',
        content: `answer ${r} of ${s}${retry ? ' (retried)' : ''}`,
        predecessor: user,
        created_at: T0 + r * 10 + 1,
      });
      await store.writer.setHead(s, answer);
      lastUser.set(s, user);
      lastAssistant.set(s, answer);
    }
    await new Promise((res) => setTimeout(res, 15));
  }
} finally {
  await store.close();
}
process.stdout.write('done\n');
