/**
 * An in-process mutex per key: callers of {@link KeyedMutex.run} with the same key run one at a
 * time, in the order they called; other keys do not wait. Each key's queue is dropped once empty.
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Run `fn` once every earlier caller with `key` is done. */
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const chained = previous.then(() => mine);
    this.tails.set(key, chained);
    await previous;
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === chained) this.tails.delete(key);
    }
  }
}
