// A job's short title, the one rule for it: the agent's pull request title once there is one, until
// then the first line of the prompt. Both are trimmed to one line and capped, so lists stay one row a job.
// It lives beside the schemas because the API, the store's backfill and the clients all show the same text.

export const JOB_TITLE_MAX = 80;

/** The first non-empty line of `text`, trimmed, capped at JOB_TITLE_MAX characters with an ellipsis. */
export function jobTitle(text: string): string {
  const line = text.split(/\r?\n/).map((l) => l.trim()).find((l) => l.length > 0) ?? '';
  const chars = [...line.replace(/\s+/g, ' ')];
  return chars.length > JOB_TITLE_MAX ? chars.slice(0, JOB_TITLE_MAX - 1).join('').trimEnd() + '…' : chars.join('');
}
