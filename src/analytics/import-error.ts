// The one kind of import failure reported as a sentence rather than a bug.
import { CodedError } from '../errors.ts';

/** A clear, expected failure of an import (missing project or file, locked store): one sentence, no stack. */
export class ImportError extends CodedError {
  constructor(message: string) {
    super('import_failed', message);
  }
}
