// What started a job, in words, as the dashboard and the CLI show it: a code change (with its link)
// or a traffic suggestion; and where a follow-up came from (a review on the job's pull request).
import type { JobTrigger, MessageOrigin } from '../contracts/jobs.ts';
import { triggerLabel } from '../codehost/kinds.ts';

export function startedBy(trigger: JobTrigger): { label: string; url: string | null } {
  if (trigger.kind === 'suggestion') {
    const what = trigger.suggestionKind === 'broken_paths' ? 'broken paths' : 'Markdown for AI agents';
    return { label: `${trigger.automatic ? 'The weekly automatic run of a' : 'A'} traffic suggestion (${what}, ${trigger.suggestionId})`, url: null };
  }
  return { label: triggerLabel(trigger), url: trigger.url };
}

/** A follow-up's origin in words: "from a review by @alice", with its link. */
export function messageOrigin(origin: MessageOrigin): { label: string; url: string } {
  return { label: `from a review by @${origin.reviewer}`, url: origin.url };
}
