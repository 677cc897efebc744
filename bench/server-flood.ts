// Peak RSS of the ws-server under a flood: one client pipelines 1,000 `export_session` requests
// (1,000 nodes each, of a 1,000-turn session) on one socket, reading the answers as they come. The
// server runs in a child process (bench/server-flood-child.ts) and its figure is the kernel's
// high-water mark (VmHWM). Contenders in the same run: the server with its per-connection limits
// (default maxInFlight and maxBuffered), and the same server with the limits lifted (what it did
// before them).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import WebSocket from 'ws';
import { writeResults } from './lib/measure.js';

const REQUESTS = 1000;
const MB = 1 << 20;

const rssOf = (pid: number, field: 'VmHWM' | 'VmRSS'): number =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;

async function start(mode: string): Promise<{ child: ChildProcess; port: number; token: string; dir: string }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--conditions=source', new URL('./server-flood-child.ts', import.meta.url).pathname, mode],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out.split('\n')[0]!);
    });
    child.once('exit', (code) => reject(new Error(`server child exited ${code}`)));
  });
  return { child, ...(JSON.parse(line) as { port: number; token: string; dir: string }) };
}

async function flood(mode: string) {
  const { child, port, token, dir } = await start(mode);
  const before = rssOf(child.pid!, 'VmRSS');
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ws?token=${token}`, { maxPayload: 0 });
  await new Promise((r) => ws.once('open', r));
  const counts = { ok: 0, busy: 0, other: 0 };
  const started = performance.now();
  const done = new Promise<void>((resolve) => {
    let n = 0;
    ws.on('message', (d) => {
      const m = JSON.parse(String(d)) as { ok: boolean; error?: { code: string } };
      if (m.ok) counts.ok++;
      else if (m.error?.code === 'BUSY') counts.busy++;
      else counts.other++;
      if (++n === REQUESTS) resolve();
    });
  });
  for (let i = 0; i < REQUESTS; i++)
    ws.send(JSON.stringify({ id: i, action: 'export_session', params: { session_id: 'long', limit: 1000 } }));
  await done;
  const ms = performance.now() - started;
  const peak = rssOf(child.pid!, 'VmHWM');
  ws.close();
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
  return { mode, before, peak, ms, ...counts };
}

export async function run(): Promise<void> {
  const limited = await flood('limited');
  const unlimited = await flood('unlimited');
  const out = (n: number) => `${(n / MB).toFixed(0)} MB`;
  console.log(
    `server-flood bench: ${REQUESTS} pipelined export_session requests (1,000 nodes each) on one socket; the server's peak RSS (VmHWM of its process)`,
  );
  for (const r of [limited, unlimited])
    console.log(
      `  ${r.mode.padEnd(9)} peak ${out(r.peak)} (before ${out(r.before)}) · answered ok ${r.ok}, BUSY ${r.busy}, other ${r.other} · ${r.ms.toFixed(0)} ms`,
    );
  console.log(`  peak unlimited / limited: ${(unlimited.peak / limited.peak).toFixed(2)}x`);
  writeResults('server-flood', { requests: REQUESTS, limited, unlimited });
}
