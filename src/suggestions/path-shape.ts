// Which visitors' paths may go into a suggestion (its prompt, its JSON context, an automatic run):
// only those shaped like a page address of a docs site. Every other path is still listed for people
// (escaped, with the reason) but never reaches the agent. This module is the one owner of that rule.
//
// The rule: at most MAX_PATH_CHARS characters and MAX_PATH_SEGMENTS segments; no empty segment (`//`) and no
// dot segment (`.`, `..`); each segment, once its percent-escapes are decoded, made only of RFC 3986's
// unreserved characters (A–Z a–z 0–9 - . _ ~) or letters, marks and digits of any script (sites in
// other languages have such page names). Refused, raw or escaped: the sub-delimiters and `:` `@`
// (`;`, `=`, `,`, `(`…: no framework makes page slugs of them, and they are what a sentence or a URL
// needs), spaces, quotes, controls, format and bidirectional characters, an escaped `/`, and a `%`
// that is not a valid escape of UTF-8.

import { SITE_PATH_LIMITS, type PathShapeProblem } from '../contracts/suggestions.ts';

/** Longest path proposed, in UTF-16 code units of the path as stored (query and fragment removed). */
export const MAX_PATH_CHARS = SITE_PATH_LIMITS.chars;
/** Most segments a proposed path has (a trailing slash adds none). */
export const MAX_PATH_SEGMENTS = SITE_PATH_LIMITS.segments;

export type { PathShapeProblem };

export type PathShape = { ok: true } | { ok: false; reason: PathShapeProblem; message: string };

const SEGMENT_CHAR = /^[A-Za-z0-9\-._~\p{L}\p{M}\p{Nd}]$/u;
const ESCAPE = /%(?![0-9A-Fa-f]{2})/;

const refused = (reason: PathShapeProblem, message: string): PathShape => ({ ok: false, reason, message });
const codePoint = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

function segmentShape(segment: string): PathShape {
  if (segment === '') return refused('empty_segment', 'It has an empty segment ("//"); site paths have none.');
  if (ESCAPE.test(segment)) return refused('bad_escape', 'It has a "%" that is not a percent-escape.');
  let decoded: string;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    return refused('bad_escape', 'It has a percent-escape that is not UTF-8.');
  }
  if (/^\.+$/.test(decoded)) return refused('dot_segment', 'It has a "." or ".." segment; site paths have none.');
  for (const c of decoded) {
    if (!SEGMENT_CHAR.test(c)) return refused('character', `It has a character site paths do not use (${codePoint(c)}).`);
  }
  return { ok: true };
}

/** Whether a not-found path is shaped like a page address of the site (and so may be proposed to the agent). */
export function siteShapedPath(path: string): PathShape {
  if (path.length > MAX_PATH_CHARS) return refused('too_long', `It is longer than ${MAX_PATH_CHARS} characters.`);
  if (!path.startsWith('/')) return refused('character', 'It does not start with "/".');
  // A trailing slash (MkDocs' and many sites' page addresses) adds no segment; "/" has none.
  const body = path.endsWith('/') ? path.slice(1, -1) : path.slice(1);
  if (body === '') return path === '/' ? { ok: true } : refused('empty_segment', 'It has an empty segment ("//"); site paths have none.');
  const segments = body.split('/');
  if (segments.length > MAX_PATH_SEGMENTS) return refused('too_many_segments', `It has more than ${MAX_PATH_SEGMENTS} segments.`);
  for (const s of segments) {
    const shape = segmentShape(s);
    if (!shape.ok) return shape;
  }
  return { ok: true };
}
