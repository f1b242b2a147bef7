// Regular expressions from the model, users or code hosts: the one way Folio runs them. A pattern
// runs on RE2's linear-time engine (re2js), so no pattern can make matching take more than time
// proportional to the text — JavaScript's backtracking RegExp can take exponential time (`(a+)+$`)
// on the server's only thread. Patterns RE2 cannot run (backreferences, lookarounds) and very long
// ones are refused with a sentence the caller can pass on.
import { RE2JS } from 're2js';
import { CodedError } from '../errors.ts';

/** Longer patterns are refused: RE2 compiles in time and memory proportional to the pattern too. */
export const MAX_PATTERN_LENGTH = 1000;

export class PatternError extends CodedError {
  constructor(message: string) {
    super('invalid_pattern', message);
  }
}

export interface UntrustedPattern {
  /** True when the pattern matches somewhere in `text` (linear in the text's length). */
  test(text: string): boolean;
}

/** Compiles `source` with RE2 syntax; throws PatternError with a clear sentence when it cannot. */
export function compileUntrusted(source: string, opts: { ignoreCase?: boolean } = {}): UntrustedPattern {
  if (source.length > MAX_PATTERN_LENGTH) {
    throw new PatternError(`The pattern is ${source.length} characters long; at most ${MAX_PATTERN_LENGTH} are allowed.`);
  }
  try {
    const re = RE2JS.compile(source, opts.ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
    return { test: (text) => re.test(text) };
  } catch (err) {
    // re2js says what it could not parse ("invalid escape sequence: `\1`", "invalid or unsupported Perl syntax: `(?=`").
    const why = String((err as Error).message ?? err).replace(/^error parsing regexp: /, '');
    throw new PatternError(
      `The pattern cannot be used: ${why}. Patterns use RE2 syntax (like JavaScript's, without backreferences or lookahead/lookbehind).`,
    );
  }
}

// ---------------------------------------------------------------------------------------------- globs
// Globs from the model (list_files, search) and users (trigger path filters). Glob libraries compile
// to backtracking RegExps: picomatch's `*a*a*a…*b` takes over a minute on a 40-character path. Here a
// glob becomes an RE2 pattern instead, so matching stays linear. The dialect: `*` (within a segment),
// `?`, `**` (any number of segments), `[abc]`/`[!a-z]` classes, `{a,b}` alternatives, `\` escapes;
// dot files match like any other. With `matchBase`, a glob without a `/` matches a path's last segment.

export const MAX_GLOB_LENGTH = 500;
const MAX_ALTERNATIVES = 100;

const escapeLiteral = (c: string) => c.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');

/** The RE2 source of one path segment of a glob (no `/` inside). `count` bounds `{…}` alternatives. */
function segmentSource(glob: string, count: { alternatives: number }): string {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '\\') {
      if (i + 1 >= glob.length) throw new PatternError(`The glob "${glob}" ends with a lone backslash.`);
      out += escapeLiteral(glob[++i]);
    } else if (c === '*') {
      while (glob[i + 1] === '*') i++;
      out += '[^/]*';
    } else if (c === '?') {
      out += '[^/]';
    } else if (c === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end === -1) throw new PatternError(`The glob "${glob}" has a "[" without its "]".`);
      let body = glob.slice(i + 1, end);
      const negated = body.startsWith('!') || body.startsWith('^');
      if (negated) body = body.slice(1);
      out += `[${negated ? '^/' : ''}${body.replace(/[\\\]^[]/g, '\\$&')}]`;
      i = end;
    } else if (c === '{') {
      const end = closingBrace(glob, i);
      const parts = splitTopLevel(glob.slice(i + 1, end));
      count.alternatives += parts.length;
      if (count.alternatives > MAX_ALTERNATIVES) throw new PatternError(`The glob has more than ${MAX_ALTERNATIVES} {…} alternatives.`);
      out += `(?:${parts.map((p) => segmentSource(p, count)).join('|')})`;
      i = end;
    } else {
      out += escapeLiteral(c);
    }
  }
  return out;
}

function closingBrace(glob: string, open: number): number {
  let depth = 0;
  for (let i = open; i < glob.length; i++) {
    if (glob[i] === '\\') i++;
    else if (glob[i] === '{') depth++;
    else if (glob[i] === '}' && --depth === 0) return i;
  }
  throw new PatternError(`The glob "${glob}" has a "{" without its "}".`);
}

function splitTopLevel(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    if (body[i] === '\\') i++;
    else if (body[i] === '{') depth++;
    else if (body[i] === '}') depth--;
    else if (body[i] === ',' && depth === 0) {
      parts.push(body.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(body.slice(start));
  return parts;
}

/** The RE2 source of a whole glob, anchored. */
function globSource(glob: string): string {
  const count = { alternatives: 0 };
  const segments = glob.replace(/^\.\//, '').split('/');
  let out = '';
  segments.forEach((seg, i) => {
    const last = i === segments.length - 1;
    if (seg === '**') {
      // Zero or more whole segments: `a/**/b` matches a/b and a/x/y/b; a trailing `**` also matches the folder itself.
      out += last ? (i === 0 ? '.*' : '(?:/.*)?') : i === 0 ? '(?:[^/]+/)*' : '(?:/[^/]+)*/';
    } else {
      out += segmentSource(seg, count) + (last || segments[i + 1] === '**' ? '' : '/');
    }
  });
  return `^${out}$`;
}

/**
 * Compiles a glob from the model or a user into a linear-time matcher; throws PatternError with a
 * sentence for a glob that is too long or malformed.
 */
export function compileUntrustedGlob(glob: string, opts: { matchBase?: boolean } = {}): (path: string) => boolean {
  if (glob.length === 0) throw new PatternError('The glob is empty.');
  if (glob.length > MAX_GLOB_LENGTH) throw new PatternError(`The glob is ${glob.length} characters long; at most ${MAX_GLOB_LENGTH} are allowed.`);
  const source = opts.matchBase && !glob.includes('/') ? `^(?:.*/)?${globSource(glob).slice(1, -1)}$` : globSource(glob);
  let re: RE2JS;
  try {
    re = RE2JS.compile(source);
  } catch {
    throw new PatternError(`The glob "${glob}" is not a valid glob.`);
  }
  return (path) => re.matches(path);
}
