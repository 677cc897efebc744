// The contender of the backfill bench: `git fast-import` writing the very commits entity-git
// wrote (same trees, author, committer, times and messages, so the same commit ids).
import { execFileSync, spawn } from 'node:child_process';
import { canonicalJson, messageFileName, shardOf, type DagNode, type Layout } from '../../packages/core/src/index.js';
import { TURN_FILES } from './conversation.js';
import { git } from './measure.js';

/** A commit as entity-git wrote it: its id, its author and committer lines verbatim, its message bytes. */
export interface RawCommit {
  sha: string;
  author: string;
  committer: string;
  message: Buffer;
}

/** Every commit of `main`, oldest first, read back from the entity-git repository. */
export function rawCommits(repo: string, fail: (message: string) => never): RawCommit[] {
  const shas = git(repo, 'rev-list', '--reverse', 'refs/heads/main').trim().split('\n');
  const batch = execFileSync('git', ['cat-file', '--batch'], {
    cwd: repo,
    input: `${shas.join('\n')}\n`,
    maxBuffer: 1 << 28,
  });
  const out: RawCommit[] = [];
  let at = 0;
  for (const sha of shas) {
    const nl = batch.indexOf(10, at);
    const [oid, type, size] = batch.subarray(at, nl).toString('utf8').split(' ');
    if (oid !== sha || type !== 'commit') fail(`cat-file --batch answered ${oid} ${type} for ${sha}`);
    const body = batch.subarray(nl + 1, nl + 1 + Number(size));
    at = nl + 1 + Number(size) + 1;
    const split = body.indexOf('\n\n');
    const headers = body.subarray(0, split).toString('utf8').split('\n');
    const line = (key: string) =>
      headers.find((h) => h.startsWith(`${key} `))?.slice(key.length + 1) ?? fail(`commit ${sha} has no ${key}`);
    if (headers.some((h) => !/^(tree|parent|author|committer) /.test(h)))
      fail(`commit ${sha} has a header fast-import cannot reproduce`);
    out.push({ sha, author: line('author'), committer: line('committer'), message: body.subarray(split + 2) });
  }
  return out;
}

/**
 * The fast-import stream of the same history: one commit per turn on refs/heads/main, each
 * adding the turn's message files (inline data) to its parent's tree; meta.json in the first.
 * Built from the DAG and the commits' headers, before the clock starts.
 */
export function fastImportStream(layout: Layout, nodes: DagNode[], commits: RawCommit[], meta: Buffer): Buffer {
  const chunks: Buffer[] = [];
  const data = (bytes: Buffer) => {
    chunks.push(Buffer.from(`data ${bytes.length}\n`), bytes, Buffer.from('\n'));
  };
  commits.forEach((c, i) => {
    chunks.push(Buffer.from(`commit refs/heads/main\nmark :${i + 1}\nauthor ${c.author}\ncommitter ${c.committer}\n`));
    data(c.message);
    if (i > 0) chunks.push(Buffer.from(`from :${i}\n`));
    if (i === 0) {
      chunks.push(Buffer.from('M 100644 inline meta.json\n'));
      data(meta);
    }
    for (const n of nodes.slice(i * TURN_FILES, (i + 1) * TURN_FILES)) {
      const path =
        layout === 'sharded' ? `messages/${shardOf(n.seq)}/${messageFileName(n)}` : `messages/${messageFileName(n)}`;
      chunks.push(Buffer.from(`M 100644 inline ${path}\n`));
      data(Buffer.from(canonicalJson(n)));
    }
    chunks.push(Buffer.from('\n'));
  });
  chunks.push(Buffer.from('done\n'));
  return Buffer.concat(chunks);
}

/** `git fast-import --quiet --done` in `repo`, the stream piped to it; resolves when it has exited. */
export function fastImport(repo: string, stream: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['fast-import', '--quiet', '--done'], { cwd: repo, stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`git fast-import exited ${code}: ${stderr}`)),
    );
    // One write: the whole stream is in memory, the pipe's back-pressure paces it.
    child.stdin.end(stream);
  });
}
