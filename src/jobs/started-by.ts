// What started a job, in words, as the dashboard and the CLI show it: a code change (with its link)
// or a traffic suggestion.
import type { JobTrigger } from '../contracts/jobs.ts';
import { triggerLabel } from '../codehost/kinds.ts';

export function startedBy(trigger: JobTrigger): { label: string; url: string | null } {
  if (trigger.kind === 'suggestion') {
    const what = trigger.suggestionKind === 'broken_paths' ? 'broken paths' : 'Markdown for AI agents';
    return { label: `${trigger.automatic ? 'The weekly automatic run of a' : 'A'} traffic suggestion (${what}, ${trigger.suggestionId})`, url: null };
  }
  return { label: triggerLabel(trigger), url: trigger.url };
}
