// The pull/merge request description Folio writes, and rewrites on every turn: the agent's summary,
// each instruction with the agent's answer, the files changed, the docs checks and their results, and
// a link back to the job in the dashboard. Text from prompts, the model and file names is escaped so
// it cannot break the layout or hide content.
import type { JobFile } from '../contracts/jobs.ts';
import type { ChecksMode } from '../contracts/dashboard.ts';
import type { StoredChecks } from './changes.ts';

/** GitHub refuses bodies over 65,536 characters; stay well below. */
export const MAX_BODY_CHARS = 60_000;
const MAX_PROMPT_CHARS = 2_000;
const MAX_SUMMARY_CHARS = 4_000;
const MAX_FILE_ROWS = 200;
const MAX_PROBLEMS = 50;

export interface DescriptionTurn {
  prompt: string;
  title: string | null;
  summary: string | null;
}

export interface DescriptionInput {
  jobId: string;
  /** Link to the job in the dashboard; null when FOLIO_PUBLIC_URL is not set. */
  jobUrl: string | null;
  /** Every instruction of the job in order, the current one last (with its answer). */
  turns: DescriptionTurn[];
  files: JobFile[];
  /** The latest checks report; null when checks are off or did not run. */
  checks: StoredChecks | null;
  checksMode: ChecksMode;
  baseBranch: string;
  /** The team's instruction files the agent was given (agent/instructions.ts), in order. */
  followed?: string[];
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

/** Plain text that must not open HTML comments or tags (which could hide the rest of the description). */
function plain(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** An inline code span that holds any text (backticks, pipes for table cells, no line breaks). */
function code(text: string): string {
  const t = text.replace(/[\r\n]+/g, ' ').replace(/\|/g, '\\|');
  const fence = t.includes('`') ? '``' : '`';
  return `${fence}${fence.length > 1 ? ' ' : ''}${t}${fence.length > 1 ? ' ' : ''}${fence}`;
}

function quote(text: string): string {
  return clip(text.trim(), MAX_PROMPT_CHARS)
    .split(/\r?\n/)
    .map((l) => `> ${plain(l)}`.trimEnd())
    .join('\n');
}

function instructions(turns: DescriptionTurn[], offset = 0): string {
  return turns
    .map((t, k) => {
      const i = k + offset;
      const head = i === 0 ? '**Prompt**' : `**Follow-up ${i}**`;
      const answer =
        t.title || t.summary
          ? `**Agent:** ${t.title ? `**${plain(clip(t.title, 200))}**` : ''}${t.title && t.summary ? ' — ' : ''}${t.summary ? plain(clip(t.summary.trim(), MAX_SUMMARY_CHARS)) : ''}`
          : '_No answer recorded for this instruction (the turn failed or was stopped)._';
      return `${head}\n\n${quote(t.prompt)}\n\n${answer}`;
    })
    .join('\n\n');
}

function filesSection(files: JobFile[]): string {
  const adds = files.reduce((n, f) => n + f.additions, 0);
  const dels = files.reduce((n, f) => n + f.deletions, 0);
  if (files.length === 0) return '## Files changed\n\nNone yet.';
  const rows = files.slice(0, MAX_FILE_ROWS).map((f) => {
    const change = f.status === 'renamed' && f.previousPath ? `renamed from ${code(f.previousPath)}` : f.status;
    return `| ${code(f.path)} | ${change} | ${f.binary ? 'binary' : `+${f.additions}`} | ${f.binary ? '' : `−${f.deletions}`} |`;
  });
  if (files.length > MAX_FILE_ROWS) rows.push(`| … and ${files.length - MAX_FILE_ROWS} more files | | | |`);
  return [`## Files changed (${files.length}, +${adds} −${dels})`, '', '| File | Change | Added | Removed |', '|---|---|---:|---:|', ...rows].join('\n');
}

function problemLines(list: StoredChecks['problems']): string[] {
  const lines = list.slice(0, MAX_PROBLEMS).map((p) => `- ${code(p.line ? `${p.path}:${p.line}` : p.path)} (${p.check}): ${plain(clip(p.message, 500))}`);
  if (list.length > MAX_PROBLEMS) lines.push(`- … and ${list.length - MAX_PROBLEMS} more.`);
  return lines;
}

function checksSection(input: DescriptionInput): string {
  const c = input.checks;
  if (input.checksMode === 'off' && !c) return '## Docs checks\n\nOff for this project.';
  if (!c) return '## Docs checks\n\nNot run: the job changed no files.';
  // With the project's checks off, a suggestion job still runs the checks it must pass.
  const mode = input.checksMode === 'off' ? '**off** (only what a suggestion job must pass)' : `**${input.checksMode}**`;
  const head = `Mode ${mode} · ${c.framework} · ran: ${c.ran.join(', ')} · ${c.pagesChecked} page${c.pagesChecked === 1 ? '' : 's'} checked${c.truncated ? ' (partially: limits reached)' : ''}`;
  const parts = ['## Docs checks', '', head, ''];
  if (c.build) parts.push(buildLine(c.build), '');
  if (c.problems.length === 0) parts.push('✅ No problems introduced by this job.');
  else {
    parts.push(`⚠️ ${c.problems.length} problem${c.problems.length === 1 ? '' : 's'} introduced by this job ${c.problems.length === 1 ? 'is' : 'are'} left for review:`, '');
    parts.push(...problemLines(c.problems));
  }
  if (c.preExisting.length > 0) {
    parts.push(
      '',
      `<details><summary>${c.preExisting.length} problem${c.preExisting.length === 1 ? '' : 's'} already on ${plain(input.baseBranch)} (not caused by this job)</summary>`,
      '',
      ...problemLines(c.preExisting),
      '',
      '</details>',
    );
  }
  return parts.join('\n');
}

/** The site's own build in one line: what ran and how it went, or why it did not run. */
function buildLine(b: NonNullable<StoredChecks['build']>): string {
  const what = `Site build (${plain(b.tool)}): ${code(b.command)}`;
  if (b.status === 'passed') return `✅ ${what} passed in ${(b.ms / 1000).toFixed(1)} s${b.setup === 'cached' ? ' (setup reused)' : ''}.`;
  if (b.status === 'skipped') return `⏭️ ${what} did not run: ${plain(b.reason ?? '')}`;
  return `❌ ${what} failed: ${plain(b.reason ?? '')}`;
}

export function pullRequestBody(input: DescriptionInput): string {
  const last = [...input.turns].reverse().find((t) => t.summary || t.title);
  const summary = last ? plain(clip((last.summary ?? last.title ?? '').trim(), MAX_SUMMARY_CHARS)) : 'The agent is working on this job.';
  const followed = input.followed ?? [];
  const footer = [
    ...(followed.length > 0 ? [`Followed the team's instructions in ${followed.slice(0, 30).map(code).join(', ')}${followed.length > 30 ? ` and ${followed.length - 30} more` : ''}.`, ''] : []),
    '---',
    `${input.jobUrl ? `[Open job \`${input.jobId}\` in Folio](${input.jobUrl})` : `Folio job \`${input.jobId}\``} · Written by Folio; follow-up instructions to the job add commits and update this description.`,
  ].join('\n');
  const sections = ['## Summary', '', summary, '', '## Instructions', '', instructions(input.turns), '', filesSection(input.files), '', checksSection(input), '', footer];
  let body = sections.join('\n');
  if (body.length > MAX_BODY_CHARS) {
    // Instructions are what can grow without bound: keep the latest ones.
    const rest = body.length - instructions(input.turns).length;
    const room = Math.max(1000, MAX_BODY_CHARS - rest - 200);
    let kept = input.turns.slice();
    let text = instructions(kept);
    while (text.length > room && kept.length > 1) {
      kept = kept.slice(1);
      text = `_${input.turns.length - kept.length} earlier instruction(s) left out; see the job in Folio._\n\n${instructions(kept, input.turns.length - kept.length)}`;
    }
    sections[6] = text.length > room ? text.slice(0, room) : text;
    body = sections.join('\n');
    if (body.length > MAX_BODY_CHARS) body = `${body.slice(0, MAX_BODY_CHARS - 100)}\n\n… (description cut to ${MAX_BODY_CHARS} characters)`;
  }
  return body;
}
