// A log line as UTF-16 code units, so one parser reads both an ASCII line straight from the file's
// bytes (each byte is its own code unit) and any other line decoded to a string.

/** The code units of the current line (`codes[s, e)`) and its text. */
export interface CodeUnits {
  readonly codes: Uint8Array | Uint16Array;
  text(s: number, e: number): string;
}

const latin1 = new TextDecoder('latin1');

/** The bytes of a file, for lines that are all ASCII (then bytes and code units are the same). */
export class AsciiBytes implements CodeUnits {
  codes: Uint8Array = new Uint8Array(0);

  text(s: number, e: number): string {
    return latin1.decode(this.codes.subarray(s, e));
  }
}

/** A decoded line, copied into a reused array of its code units. */
export class StringUnits implements CodeUnits {
  codes = new Uint16Array(1024);
  private line = '';

  /** Reads `line`; its units are then `codes[0, line.length)`. */
  set(line: string): void {
    if (line.length > this.codes.length) this.codes = new Uint16Array(Math.max(line.length, 2 * this.codes.length));
    const codes = this.codes;
    for (let i = 0; i < line.length; i++) codes[i] = line.charCodeAt(i);
    this.line = line;
  }

  text(s: number, e: number): string {
    return this.line.slice(s, e);
  }
}
