// Reading webhook payloads: payloads are hostile even when signed, so every field a host adapter uses
// is checked for its type and bounded here, and nothing from them is used as a URL or a command.
import { MalformedPayload, type ParsedDelivery, type TriggerHost } from './triggers.ts';

export type Obj = Record<string, unknown>;
const SHA = /^[0-9a-f]{7,64}$/i;
export const ZERO_SHA = /^0+$/;
const MAX_LABELS = 100;
const MAX_PAYLOAD_FILES = 3000;

export function obj(v: unknown, where: string): Obj {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new MalformedPayload(`${where} is not an object.`);
  return v as Obj;
}
export function str(o: Obj, key: string, where: string, opts: { optional?: boolean; max?: number } = {}): string {
  const v = o[key];
  if ((v === undefined || v === null) && opts.optional) return '';
  if (typeof v !== 'string') throw new MalformedPayload(`${where}.${key} is not a string.`);
  const max = opts.max ?? 100_000;
  // NUL is dropped at once: no store keeps it in text (PostgreSQL refuses it) and no name contains it.
  const clean = v.includes('\u0000') ? v.replaceAll('\u0000', '') : v;
  return clean.length > max ? clean.slice(0, max) : clean;
}
export function int(o: Obj, key: string, where: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) throw new MalformedPayload(`${where}.${key} is not a positive whole number.`);
  return v;
}
export function sha(o: Obj, key: string, where: string, optional = false): string | null {
  const v = o[key];
  if ((v === undefined || v === null) && optional) return null;
  if (typeof v !== 'string' || !SHA.test(v)) throw new MalformedPayload(`${where}.${key} is not a commit id.`);
  return v.toLowerCase();
}
/** A commit id used only to tell changes apart: anything else is as if it were not given. */
export function shaOrNull(o: Obj, key: string): string | null {
  const v = o[key];
  return typeof v === 'string' && SHA.test(v) && !ZERO_SHA.test(v) ? v.toLowerCase() : null;
}
export function list(o: Obj, key: string, where: string): unknown[] {
  const v = o[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new MalformedPayload(`${where}.${key} is not a list.`);
  return v;
}
export function labelsOf(items: unknown[], field: 'name' | 'title'): string[] {
  const out: string[] = [];
  for (const item of items.slice(0, MAX_LABELS)) {
    if (item && typeof item === 'object' && typeof (item as Obj)[field] === 'string') out.push(((item as Obj)[field] as string).replaceAll('\u0000', '').slice(0, 200));
  }
  return out;
}
export function filesOfCommits(commits: unknown[]): string[] {
  const files = new Set<string>();
  for (const c of commits) {
    if (!c || typeof c !== 'object') continue;
    for (const k of ['added', 'modified', 'removed']) {
      const v = (c as Obj)[k];
      if (!Array.isArray(v)) continue;
      for (const f of v) if (typeof f === 'string' && f.length <= 4096 && !f.includes('\u0000') && files.size < MAX_PAYLOAD_FILES) files.add(f);
    }
  }
  return [...files];
}
export function commitLines(commits: unknown[]): string {
  return commits
    .slice(0, 50)
    .map((c) => (c && typeof c === 'object' && typeof (c as Obj).message === 'string' ? `- ${((c as Obj).message as string).replaceAll('\u0000', '').split('\n')[0].slice(0, 300)}` : ''))
    .filter(Boolean)
    .join('\n');
}
export const branchOfRef = (ref: string) => (ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null);

/** A string of an API answer, cut to `max`; null when it is not a string. */
export const boundedText = (v: unknown, max: number): string | null => (typeof v === 'string' ? v.slice(0, max) : null);

/** A push to the default branch as a change: its commits give the description and the files the payload names. */
export function pushChange(host: TriggerHost, push: { fullPath: string; title: string; author: string; before: string | null; after: string | null; commits: unknown[] }): ParsedDelivery {
  const { fullPath, title, author, before, after, commits } = push;
  return {
    type: 'change',
    event: {
      kind: 'push',
      host,
      fullPath,
      number: null,
      title,
      description: commitLines(commits),
      author,
      labels: [],
      before: before && !ZERO_SHA.test(before) ? before : null,
      after,
      mergeCommit: null,
      payloadFiles: filesOfCommits(commits),
    },
  };
}
