// A command's output, kept up to a cap: what comes after it is counted, never held.

export class BoundedOutput {
  readonly #cap: number;
  readonly #chunks: Buffer[] = [];
  #kept = 0;
  /** Every byte seen, kept or not. */
  total = 0;

  constructor(cap: number) {
    this.#cap = cap;
  }

  /** Adds a chunk; false once the output went past the cap. */
  push(chunk: Buffer): boolean {
    this.total += chunk.length;
    const room = this.#cap - this.#kept;
    if (room > 0) {
      const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
      this.#chunks.push(part);
      this.#kept += part.length;
    }
    return this.total <= this.#cap;
  }

  get exceeded(): boolean {
    return this.total > this.#cap;
  }

  /** The kept output as text (a character cut at the cap is dropped). */
  text(): string {
    return Buffer.concat(this.#chunks).toString('utf8').replace(/\uFFFD$/, '');
  }
}
