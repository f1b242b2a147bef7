// What changed between two commits, file by file, from git's machine-readable diff output.
import type { JobFile } from '../contracts/jobs.ts';

/**
 * One changed file: the job's file entry of the API (contracts/jobs.ts), stated there once. Status in
 * GitHub's words (copies count as added); binary files have no line counts (0 and 0).
 */
export type DiffFile = JobFile;

/** Parses `git diff --name-status -z -M` and `git diff --numstat -z -M` of the same range. */
export function parseDiffFiles(status: string, numstat: string): DiffFile[] {
  const files: DiffFile[] = [];
  const byPath = new Map<string, DiffFile>();
  const s = status.split('\0');
  for (let i = 0; i + 1 < s.length; ) {
    const code = s[i];
    if (!code) break;
    const kind = code[0];
    if (kind === 'R' || kind === 'C') {
      const from = s[i + 1];
      const to = s[i + 2];
      i += 3;
      const f: DiffFile = kind === 'R' ? { path: to, status: 'renamed', previousPath: from, additions: 0, deletions: 0 } : { path: to, status: 'added', additions: 0, deletions: 0 };
      files.push(f);
      byPath.set(to, f);
    } else {
      const p = s[i + 1];
      i += 2;
      const f: DiffFile = { path: p, status: kind === 'A' ? 'added' : kind === 'D' ? 'deleted' : 'modified', additions: 0, deletions: 0 };
      files.push(f);
      byPath.set(p, f);
    }
  }
  const n = numstat.split('\0');
  for (let i = 0; i < n.length; ) {
    const head = n[i];
    if (!head) break;
    const m = /^(-|\d+)\t(-|\d+)\t(.*)$/s.exec(head);
    if (!m) break;
    let p = m[3];
    i += 1;
    if (p === '') {
      // A rename: the old and new paths follow.
      p = n[i + 1];
      i += 2;
    }
    const f = byPath.get(p);
    if (!f) continue;
    if (m[1] === '-') f.binary = true;
    else {
      f.additions = Number(m[1]);
      f.deletions = Number(m[2]);
    }
  }
  return files;
}
