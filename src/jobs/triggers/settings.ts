// A project's trigger settings as the dashboard edits them: watched repositories with their events,
// path and label filters, and the prompt template. Everything is checked before it is stored.
import { parseRepositoryUrl, triggerAdapter } from '../../codehost/index.ts';
import { TRIGGER_HOSTS } from '../../contracts/common.ts';
import type { TriggerHost } from '../../store/schema.ts';
import type { TriggerEvent, TriggerStore, WatchedRepositoryInput } from '../../store/triggers.ts';
import { DEFAULT_TEMPLATE, PLACEHOLDERS, TEMPLATE_LIMIT, unknownPlaceholders } from './template.ts';
import { globProblem } from './summary.ts';
import type { TriggerSettings } from '../../contracts/triggers.ts';
import { CodedError } from '../../errors.ts';

export const MAX_REPOSITORIES = 20;
export const MAX_PATHS = 50;
export const MAX_LABELS = 20;
const EVENTS: readonly TriggerEvent[] = ['merged', 'opened', 'push'];

export interface RepositorySettingsInput {
  id?: string;
  host: TriggerHost;
  repositoryUrl: string;
  events: TriggerEvent[];
  paths?: string[];
  labels?: string[];
  token?: string | null;
}

export interface TriggerSettingsInput {
  template?: string | null;
  repositories?: RepositorySettingsInput[];
}

export type TriggerSettingsView = TriggerSettings;

/** A setting that cannot be stored; the message says which and why. */
export class TriggerSettingsError extends CodedError {
  constructor(message: string) {
    super('invalid_trigger_settings', message);
  }
}

function checkRepository(r: RepositorySettingsInput, i: number): WatchedRepositoryInput {
  const where = `Repository ${i + 1}`;
  if (!TRIGGER_HOSTS.includes(r.host)) throw new TriggerSettingsError(`${where}: the host must be one of ${TRIGGER_HOSTS.join(', ')}.`);
  const url = r.repositoryUrl.trim().replace(/\/+$/, '').replace(/\.git$/, '');
  if (!/^https?:\/\/[^\s/@]+\/\S+$/.test(url) || url.length > 500) {
    throw new TriggerSettingsError(`${where}: "${url.slice(0, 100)}" is not a repository web address such as https://github.com/acme/api.`);
  }
  let fullPath: string;
  try {
    fullPath = parseRepositoryUrl(url).fullPath;
  } catch (err) {
    throw new TriggerSettingsError(`${where}: ${(err as Error).message}`);
  }
  const pathProblem = triggerAdapter(r.host).repositoryPathProblem(fullPath);
  if (pathProblem) throw new TriggerSettingsError(`${where}: ${pathProblem}`);
  const events = [...new Set(r.events)];
  if (events.length === 0 || events.some((e) => !EVENTS.includes(e))) {
    throw new TriggerSettingsError(`${where}: choose at least one of the events merged, opened, push.`);
  }
  const paths = [...new Set((r.paths ?? []).map((p) => p.trim()).filter(Boolean))];
  if (paths.length > MAX_PATHS) throw new TriggerSettingsError(`${where}: at most ${MAX_PATHS} path filters.`);
  for (const p of paths) {
    if (p.length > 200) throw new TriggerSettingsError(`${where}: a path filter is longer than 200 characters.`);
    const problem = globProblem(p);
    if (problem) throw new TriggerSettingsError(`${where}: ${problem}`);
  }
  const labels = [...new Set((r.labels ?? []).map((l) => l.trim()).filter(Boolean))];
  if (labels.length > MAX_LABELS || labels.some((l) => l.length > 100)) {
    throw new TriggerSettingsError(`${where}: at most ${MAX_LABELS} labels of at most 100 characters.`);
  }
  if (typeof r.token === 'string' && (r.token.trim() === '' || r.token.length > 1000)) {
    throw new TriggerSettingsError(`${where}: the token must be 1 to 1000 characters (null removes it).`);
  }
  return { id: r.id, host: r.host, repositoryUrl: url, fullPath, events, paths, labels, token: typeof r.token === 'string' ? r.token.trim() : r.token };
}

export function checkTemplate(template: string): void {
  if (template.trim() === '') throw new TriggerSettingsError('The template must not be empty; send null to use the default.');
  if (template.length > TEMPLATE_LIMIT) throw new TriggerSettingsError(`The template is longer than ${TEMPLATE_LIMIT} characters.`);
  const unknown = unknownPlaceholders(template);
  if (unknown.length) {
    throw new TriggerSettingsError(`The template names unknown placeholders: ${unknown.map((u) => `{{${u}}}`).join(', ')}; known: ${PLACEHOLDERS.map((p) => `{{${p}}}`).join(', ')}.`);
  }
}

export async function triggerSettingsView(store: TriggerStore, projectId: string, baseUrl: string): Promise<TriggerSettingsView> {
  const s = await store.settings(projectId);
  const endpoint = (host: TriggerHost) => `${baseUrl}/v1/triggers/${encodeURIComponent(projectId)}/${host}`;
  return {
    endpoints: Object.fromEntries(TRIGGER_HOSTS.map((host) => [host, endpoint(host)])) as Record<TriggerHost, string>,
    hasSecret: s.hasSecret,
    secretCreatedAt: s.secretCreatedAt,
    template: s.template ?? DEFAULT_TEMPLATE,
    customTemplate: s.template !== null,
    defaultTemplate: DEFAULT_TEMPLATE,
    placeholders: [...PLACEHOLDERS],
    repositories: await store.repositories(projectId),
    refusedDeliveries: s.refusedDeliveries,
    lastRefusedAt: s.lastRefusedAt,
  };
}

/** Checks and stores the settings given; the others stay as they are. */
export async function updateTriggerSettings(store: TriggerStore, projectId: string, input: TriggerSettingsInput): Promise<void> {
  const repositories = input.repositories?.map(checkRepository);
  if (repositories) {
    if (repositories.length > MAX_REPOSITORIES) throw new TriggerSettingsError(`At most ${MAX_REPOSITORIES} watched repositories.`);
    const seen = new Set<string>();
    for (const r of repositories) {
      const k = `${r.host}:${r.fullPath.toLowerCase()}`;
      if (seen.has(k)) throw new TriggerSettingsError(`${r.repositoryUrl} is listed twice.`);
      seen.add(k);
    }
  }
  if (typeof input.template === 'string') checkTemplate(input.template);
  if (input.template !== undefined) await store.setTemplate(projectId, input.template === null || input.template === DEFAULT_TEMPLATE ? null : input.template);
  if (repositories) await store.replaceRepositories(projectId, repositories);
}
