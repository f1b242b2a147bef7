// Running tasks one at a time: the one helper for "at most one of these at a time" in this process.
// A task that fails does not stop the next.

/** Tasks one at a time, each after the ones given before it. */
export class Serial {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(task, task);
    this.#tail = result.catch(() => undefined);
    return result;
  }

  /** Resolves once every task given so far has finished. */
  async idle(): Promise<void> {
    await this.#tail;
  }
}

/** Tasks one at a time per key, each after the ones given before it with that key. */
export class KeyedSerial {
  readonly #tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.catch(() => undefined);
    this.#tails.set(key, tail);
    // Forget the key once nothing waits on it, so the map holds only keys in use.
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }

  /** Keys with a task running or waiting. */
  get size(): number {
    return this.#tails.size;
  }
}
