// The commit bench's floor: a session's loose objects written by hand, nothing else (no refs, no
// index, no temp files), the least any implementation must do per turn; and a turn's message files.
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { deflateSync } from 'node:zlib';
import { canonicalJson, messageFileName, shardOf, type DagNode, type Layout } from '../../packages/core/src/index.js';

export interface FileOut {
  name: string;
  shard: string;
  bytes: Buffer;
}
export const filesOf = (nodes: DagNode[]): FileOut[] =>
  nodes.map((n) => ({ name: messageFileName(n), shard: shardOf(n.seq), bytes: Buffer.from(canonicalJson(n)) }));

export class Floor {
  private readonly objects: string;
  /** messages/ entries in git's order, each already encoded, as a long-lived writer would keep them (by shard when sharded). */
  private shards = new Map<string, { name: Buffer; bytes: Buffer }[]>();
  /** Sharded: each shard's tree entry, kept until the shard changes. */
  private shardEntries = new Map<string, Buffer>();
  private parent: string | null = null;
  lastTree = '';
  lastCommit = '';
  private readonly metaBlob: Buffer;
  constructor(
    readonly gitdir: string,
    metaBytes: Buffer,
    private readonly layout: Layout,
  ) {
    this.objects = join(gitdir, 'objects');
    // The fan-out directories exist in any repository that has been used for a while.
    for (let i = 0; i < 256; i++) mkdirSync(join(this.objects, i.toString(16).padStart(2, '0')), { recursive: true });
    this.metaBlob = Floor.write(this.objects, 'blob', metaBytes);
  }

  /** Time spent inside writeFileSync: file creation cost varies far more between machines than CPU. */
  static writeMs = 0;

  static write(objects: string, type: string, content: Buffer): Buffer {
    const full = Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content]);
    const sha = createHash('sha1').update(full).digest();
    const hex = sha.toString('hex');
    const deflated = deflateSync(full);
    const t0 = performance.now();
    writeFileSync(join(objects, hex.slice(0, 2), hex.slice(2)), deflated);
    Floor.writeMs += performance.now() - t0;
    return sha;
  }

  commit(files: FileOut[], message: string, time: number): void {
    const changed = new Set<string>();
    for (const f of files) {
      const sha = Floor.write(this.objects, 'blob', f.bytes);
      const name = Buffer.from(f.name);
      const shard = this.layout === 'sharded' ? f.shard : '';
      const list = this.shards.get(shard) ?? [];
      this.shards.set(shard, list);
      list.push({ name, bytes: Buffer.concat([Buffer.from('100644 '), name, Buffer.from([0]), sha]) });
      changed.add(shard);
    }
    let messages: Buffer;
    if (this.layout === 'flat') {
      const entries = this.shards.get('')!;
      // Nearly sorted already (names start with the seq), so this is a linear pass — but it is done.
      entries.sort((a, b) => Buffer.compare(a.name, b.name));
      messages = Floor.write(this.objects, 'tree', Buffer.concat(entries.map((e) => e.bytes)));
    } else {
      for (const shard of changed) {
        const entries = this.shards.get(shard)!;
        entries.sort((a, b) => Buffer.compare(a.name, b.name));
        const tree = Floor.write(this.objects, 'tree', Buffer.concat(entries.map((e) => e.bytes)));
        this.shardEntries.set(shard, Buffer.concat([Buffer.from(`40000 ${shard}\0`), tree]));
      }
      messages = Floor.write(
        this.objects,
        'tree',
        Buffer.concat([...this.shardEntries.keys()].sort().map((k) => this.shardEntries.get(k)!)),
      );
    }
    const root = Floor.write(
      this.objects,
      'tree',
      Buffer.concat([Buffer.from('40000 messages\0'), messages, Buffer.from('100644 meta.json\0'), this.metaBlob]),
    );
    const who = `bench <bench@localhost> ${time} +0000`;
    const commit = Floor.write(
      this.objects,
      'commit',
      Buffer.from(
        `tree ${root.toString('hex')}\n${this.parent ? `parent ${this.parent}\n` : ''}author ${who}\ncommitter ${who}\n\n${message}\n`,
      ),
    );
    this.lastTree = root.toString('hex');
    this.lastCommit = this.parent = commit.toString('hex');
  }
}
