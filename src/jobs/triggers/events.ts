// What a code change means, whatever host it came from: the key a replay under a new delivery id is
// recognised by, and the same in words. (Each host's payloads are read by its adapter, src/codehost/.)
import type { ChangeEvent } from '../../codehost/triggers.ts';
import { triggerAdapter } from '../../codehost/index.ts';

/**
 * What a change means, as a key unique per project: a replay of the same code change under a new
 * delivery id has the same one. A push: its repository and range (before..after). A merged pull
 * request: its number and merge commit (its head when the payload names no merge commit). An opened
 * pull request or new commits on one: its number and head — a reopening at the same head is the same
 * change. Null when the payload lacks the commit that identifies the change: only its delivery id
 * deduplicates it then.
 */
export function meaningKeyOf(e: ChangeEvent): string | null {
  const repository = `${e.host}:${e.fullPath}`;
  if (e.kind === 'push') return e.after ? `${repository}:push:${e.before ?? ''}..${e.after}` : null;
  const merged = e.mergeCommit ?? e.after;
  if (e.kind === 'pull_request_merged') return merged ? `${repository}#${e.number}:merged:${merged}` : null;
  return e.after ? `${repository}#${e.number}:head:${e.after}` : null;
}

/** The same meaning in words, for a duplicate's reason. */
export function meaningText(e: ChangeEvent): string {
  const what = triggerAdapter(e.host).changeName(e.number ?? 0);
  const short = (commit: string | null) => (commit ?? '').slice(0, 12);
  if (e.kind === 'push') return `the push ${e.before ? `${short(e.before)}..` : ''}${short(e.after)}`;
  if (e.kind === 'pull_request_merged') return `${what} merged as ${short(e.mergeCommit ?? e.after)}`;
  return `${what} at ${short(e.after)}`;
}
