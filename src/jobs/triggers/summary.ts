// A bounded summary of what a code change touched, for the job's prompt: every file's status and
// path (up to a limit), then trimmed hunks of as many files as fit.
import { compileUntrustedGlob, PatternError } from '../../util/untrusted-pattern.ts';
import type { ChangedFile } from '../../codehost/triggers.ts';

const MAX_LISTED = 100;
const HUNK_LINES = 40;
const HUNK_CHARS = 2_000;
export const SUMMARY_LIMIT = 20_000;

const MARK: Record<ChangedFile['status'], string> = { added: 'A', modified: 'M', removed: 'D', renamed: 'R' };

function trimHunk(patch: string): string {
  const lines = patch.split('\n');
  let out = lines.slice(0, HUNK_LINES).map((l) => (l.length > 300 ? `${l.slice(0, 300)}…` : l)).join('\n');
  if (out.length > HUNK_CHARS) out = out.slice(0, HUNK_CHARS);
  if (lines.length > HUNK_LINES || out.length < patch.length) out += `\n… (${lines.length} lines in all, trimmed)`;
  return out;
}

export function summarizeChange(files: ChangedFile[], note?: string): string {
  const parts: string[] = [];
  if (note) parts.push(note);
  if (files.length === 0) return [...parts, 'No changed files are known.'].join('\n');
  parts.push(`${files.length} file${files.length === 1 ? '' : 's'} changed:`);
  for (const f of files.slice(0, MAX_LISTED)) parts.push(`${MARK[f.status]} ${f.previousPath ? `${f.previousPath} → ` : ''}${f.path}`);
  if (files.length > MAX_LISTED) parts.push(`… and ${files.length - MAX_LISTED} more`);
  let out = parts.join('\n');
  for (const f of files) {
    if (!f.patch) continue;
    const block = `\n\n--- ${f.path}\n${trimHunk(f.patch)}`;
    if (out.length + block.length > SUMMARY_LIMIT) {
      out += '\n\n… (more hunks left out)';
      break;
    }
    out += block;
  }
  return out.slice(0, SUMMARY_LIMIT);
}

/** True when no filter is set or some changed path (or a renamed file's old path) matches one. */
export function pathsMatch(files: { path: string; previousPath?: string | null }[], globs: string[]): boolean {
  if (globs.length === 0) return true;
  const matchers = globs.map((g) => compileUntrustedGlob(g));
  const match = (path: string) => matchers.some((m) => m(path));
  return files.some((f) => match(f.path) || (f.previousPath ? match(f.previousPath) : false));
}

/** Checks a path filter compiles (linear-time globs, untrusted-pattern.ts); returns a sentence when it does not. */
export function globProblem(glob: string): string | null {
  try {
    compileUntrustedGlob(glob);
    return null;
  } catch (err) {
    if (err instanceof PatternError) return `Path filter "${glob.slice(0, 100)}": ${err.message}`;
    throw err;
  }
}
