// Option values shared by the command groups: parsers that refuse a bad value before anything runs,
// and the connection to a Folio server of the client commands (jobs, analytics queries).
import { InvalidArgumentError, Option, type Command } from 'commander';
import { FolioClient } from '../client/client.ts';
import { inCliWords, UsageError } from './errors.ts';

/** A whole number in [min, max]. */
export function intOption(min: number, max: number) {
  return (value: string): number => {
    if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}.`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}.`);
    return n;
  };
}

/** "90" (seconds), "90s", "15m", "2h", "1d" → milliseconds. */
export function durationOption(value: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(value.trim());
  if (!m) throw new InvalidArgumentError('expected a duration such as 90s, 15m or 2h.');
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h' | 'd'];
  const ms = Number(m[1]) * unit;
  if (!(ms > 0)) throw new InvalidArgumentError('expected a duration greater than zero.');
  return ms;
}

/** true/yes/1 or false/no/0. */
export function boolOption(value: string): boolean {
  if (value === 'true' || value === 'yes' || value === '1') return true;
  if (value === 'false' || value === 'no' || value === '0') return false;
  throw new UsageError(`Expected true or false, got "${value}".`);
}

/** A repeatable option: every value, in order. */
export const repeatable = (value: string, previous: string[] = []): string[] => [...previous, value];

export interface ConnectionOptions {
  url?: string;
  key?: string;
  project?: string;
  json?: boolean;
}

/** --project, also from FOLIO_PROJECT: the one definition of every command that takes a project. */
export function projectOption(description = 'project id'): Option {
  return new Option('--project <id>', description).env('FOLIO_PROJECT');
}

/** The sentence of a missing required option: its flag, and the variable that can give it instead. */
function missing(option: Pick<Option, 'long' | 'envVar'>): string {
  return `${option.long} is required${option.envVar ? ` (or set ${option.envVar})` : ''}.`;
}

/**
 * Options marked by required(). Commander's own mandatory options are not used: a missing one would
 * print the whole help; checkRequired() makes it one line instead.
 */
const REQUIRED = new WeakSet<Option>();

/** Marks an option as required (checked by checkRequired before the command's action runs). */
export function required(option: Option): Option {
  REQUIRED.add(option);
  return option;
}

/** Throws a one-line UsageError for the first required option of `command` that has no value (an empty variable is none). */
export function checkRequired(command: Command): void {
  for (const option of command.options) {
    const value: unknown = command.getOptionValue(option.attributeName());
    if (REQUIRED.has(option) && (value === undefined || value === '')) throw new UsageError(missing(option));
  }
}

/** --url, --key, --project (each also from the environment) and --json. */
export function withConnection(cmd: Command, jsonHelp = 'machine-readable JSON output'): Command {
  return cmd
    .addOption(new Option('--url <url>', 'Folio base URL').env('FOLIO_URL'))
    .addOption(new Option('--key <key>', 'admin API key').env('FOLIO_API_KEY'))
    .addOption(projectOption())
    .option('--json', jsonHelp);
}

/** The typed client for the connection options; says which one is missing. */
export function clientFor(o: ConnectionOptions): FolioClient {
  if (!o.url) throw new UsageError('No server: pass --url or set FOLIO_URL (e.g. https://folio.example.com).');
  if (!o.key) throw new UsageError('No API key: pass --key or set FOLIO_API_KEY.');
  if (!o.project) throw new UsageError(missing(projectOption()));
  try {
    return new FolioClient({ baseUrl: o.url, apiKey: o.key, projectId: o.project });
  } catch (err) {
    throw new UsageError(inCliWords((err as Error).message.replace(/^FolioClient: /, '')));
  }
}
