// How a failed command is reported: the errors a user can act on are a `folio: …` line on stderr and
// exit code 1, never a stack trace; an interrupted wait is exit code 130.
import { CodedError } from '../errors.ts';
import { FolioError } from '../client/errors.ts';
import { clean } from './output.ts';

/** A command used wrongly, or asked for something that does not exist. */
export class UsageError extends CodedError {
  constructor(message: string) {
    super('invalid_usage', message);
  }
}

/** The API's and the client's names of what the CLI calls by its flags and variables. */
const CLI_WORDS: [RegExp, string][] = [
  [/\/querystring\/(?=\w)/g, ''],
  [/\bdateFrom\b/g, '--from'],
  [/\bdateTo\b/g, '--to'],
  [/\bminVisitors\b/g, '--min-visitors'],
  [/\bbaseUrl\b/g, '--url (FOLIO_URL)'],
  [/\bapiKey\b/g, '--key (FOLIO_API_KEY)'],
];

/** A sentence from the server or the client in the CLI's words: `--from`, not `dateFrom`; `FOLIO_URL`, not `baseUrl`. */
export function inCliWords(text: string): string {
  return CLI_WORDS.reduce((out, [api, cli]) => out.replace(api, cli), text);
}

const isAbort = (err: unknown) => err instanceof Error && err.name === 'AbortError';

/**
 * What stderr says about a failure, or null for an unexpected one (a bug: its stack is worth having).
 * Folio's own errors (CodedError: usage, settings, input the store refused, a failed import) are their
 * sentence; a server's (FolioError) also names status and code, its details and request id, all of it
 * cleaned, as it comes from the network.
 */
export function describeFailure(err: unknown): string | null {
  if (err instanceof FolioError) {
    const where = err.status ? `${err.status} ${err.code}` : err.code;
    const lines = [`folio: ${inCliWords(clean(err.message))} (${clean(where)})`];
    for (const d of err.details ?? []) lines.push(inCliWords(clean(`  - ${d.path ? `${d.path}: ` : ''}${d.message}`)));
    if (err.requestId) lines.push(`  request id: ${clean(err.requestId)}`);
    return lines.join('\n');
  }
  if (err instanceof CodedError) return `folio: ${err.message}`;
  if (isAbort(err)) return 'folio: stopped.';
  return null;
}

/** Exit codes of failures a supervisor may want to tell apart (sysexits.h): a store that does not answer, a wrong secret. */
const EXIT_CODES: Record<string, number> = { store_unavailable: 69, secret_mismatch: 78 };

/** 130 for a wait stopped by Ctrl-C, as shells report a SIGINT; 69 and 78 per EXIT_CODES; 1 for every other failure. */
export function exitCodeOf(err: unknown): number {
  if (isAbort(err)) return 130;
  return err instanceof CodedError ? (EXIT_CODES[err.code] ?? 1) : 1;
}
