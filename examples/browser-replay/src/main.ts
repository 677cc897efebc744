// isomorphic-git (inside core) calls Node's Buffer; browsers have none.
import { Buffer } from 'buffer';
import { startApp } from './app.js';

const g = globalThis as { Buffer?: unknown };
g.Buffer ??= Buffer;

void startApp(document.getElementById('app')!).catch((err: unknown) => {
  document.body.textContent = `The app failed to start: ${(err as Error).message}`;
});
