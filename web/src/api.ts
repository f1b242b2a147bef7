// The dashboard's HTTP layer. Sign-in and the admin API (/api) are called here directly; jobs and
// analytics go through the typed client (folio/client), authenticated by the session cookie: its
// fetch hook drops the Bearer header and adds the session's CSRF token to every change. Every wire
// type comes from the server's schemas (src/contracts) or the typed client that derives from them.
import { FolioClient, FolioError } from '../../src/client/index.ts';
import type { ChecksReport, Job, JobChanges, JobEvent, JobFile, JobStatus, JobUsage, PathCounts, TrafficCounts, UsageReport, WebhookDelivery } from '../../src/client/index.ts';
import type { AgentsResponse, RangeQuery, TimeseriesQuery, TimeseriesResponse } from '../../src/contracts/analytics.ts';
import type { ErrorBody } from '../../src/contracts/common.ts';
import type {
  ApiKey,
  ApiKeyList,
  BuildSwitch,
  ChecksMode,
  CreateAdminKeyBody,
  CreatedKey,
  CreateKeyBody,
  DashboardProject,
  ProjectList,
  Session,
  SetupState,
  UpdateProjectBody,
  User,
} from '../../src/contracts/dashboard.ts';
import type { JobMessage, JobMessageList } from '../../src/contracts/jobs.ts';
import type {
  RepositorySettings,
  TriggerDelivery,
  TriggerDeliveryList,
  TriggerSettings,
  TriggerSettingsBody,
  TriggerSettingsWithSecret,
  WatchedRepository,
} from '../../src/contracts/triggers.ts';

export type { ChecksReport, Job, JobChanges, JobEvent, JobFile, JobStatus, JobUsage, PathCounts, TrafficCounts, UsageReport, WebhookDelivery };
export type { ApiKey, BuildSwitch, ChecksMode, CreatedKey, JobMessage, Session, User };
export type { FolioClient };
export { FolioError };
export type { ImpactCounts, ImpactPage, JobImpact } from '../../src/client/index.ts';
export type { AiCompaniesPage, NotFoundPage, NotFoundPath, ReferrersPage, StartedSuggestion, Suggestion, SuggestionList } from '../../src/client/index.ts';
export type { TriggerDelivery, TriggerSettings, WatchedRepository };
/** A project as the dashboard API answers it (with its script tag). */
export type Project = DashboardProject;
/** What a project form sends: any of the settings; an empty string clears an optional one. */
export type ReviewCommentMode = Project['reviewComments'];
export type ProjectInput = Omit<UpdateProjectBody, 'checks' | 'build' | 'reviewComments'> & { checks?: ChecksMode; build?: BuildSwitch; reviewComments?: ReviewCommentMode };
export type TriggerEvent = WatchedRepository['events'][number];
/** A watched repository as the settings form sends it. */
export type RepositoryInput = RepositorySettings;
/** One bucket of GET /v1/analytics/{projectId}/timeseries. */
export type SeriesPoint = TimeseriesResponse['series'][number];
/** The bucket size of the time series: hour or day. */
export type Interval = TimeseriesQuery['interval'];
/** One row of GET /v1/analytics/{projectId}/agents. */
export type AgentRow = AgentsResponse['agents'][number];
/** A date range of the analytics API (inclusive start, exclusive end); the dashboard always sends both. */
type Range = Required<RangeQuery>;

export class ApiFailure extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

let csrfToken: string | null = null;
let onSignedOut: () => void = () => {};

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called when the server says the session is gone (expired, signed out elsewhere). */
export function whenSignedOut(fn: () => void): void {
  onSignedOut = fn;
}

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  } catch {
    throw new ApiFailure(0, 'network_error', 'Could not reach the Folio server. Check your connection and try again.');
  }
  if (res.status === 204) return undefined as T;
  const data = parseJson(await res.text());
  if (!res.ok) {
    const body = isErrorBody(data) ? data : null;
    const failure = new ApiFailure(res.status, body?.code ?? 'http_error', body?.error ?? `The server answered ${res.status}.`);
    if (res.status === 401 && body?.code === 'not_signed_in') onSignedOut();
    throw failure;
  }
  // The server serializes every answer with the route's schema, the source of T.
  return data as T;
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

function isErrorBody(data: unknown): data is ErrorBody {
  return typeof data === 'object' && data !== null && typeof (data as Partial<ErrorBody>).error === 'string' && typeof (data as Partial<ErrorBody>).code === 'string';
}

/** A readable sentence for any failure of the admin API or the typed client. */
export function errorMessage(err: unknown): string {
  if (err instanceof ApiFailure || err instanceof FolioError) return err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}

export const api = {
  setupRequired: () => request<SetupState>('GET', '/api/setup'),
  setup: (email: string, password: string, setupToken: string) => request<Session>('POST', '/api/setup', { email, password, setupToken }),
  login: (email: string, password: string) => request<Session>('POST', '/api/login', { email, password }),
  logout: () => request<void>('POST', '/api/logout'),
  session: () => request<Session>('GET', '/api/session'),

  projects: () => request<ProjectList>('GET', '/api/projects').then((r) => r.projects),
  project: (id: string) => request<Project>('GET', `/api/projects/${encodeURIComponent(id)}`),
  createProject: (input: ProjectInput) => request<Project>('POST', '/api/projects', input),
  updateProject: (id: string, input: ProjectInput) => request<Project>('PATCH', `/api/projects/${encodeURIComponent(id)}`, input),

  keys: (projectId: string) => request<ApiKeyList>('GET', `/api/projects/${encodeURIComponent(projectId)}/keys`).then((r) => r.keys),
  createKey: (projectId: string, input: CreateKeyBody) =>
    request<CreatedKey>('POST', `/api/projects/${encodeURIComponent(projectId)}/keys`, input),
  revokeKey: (projectId: string, keyId: string) =>
    request<ApiKey>('POST', `/api/projects/${encodeURIComponent(projectId)}/keys/${encodeURIComponent(keyId)}/revoke`),

  allKeys: () => request<ApiKeyList>('GET', '/api/keys').then((r) => r.keys),
  createAdminKey: (input: CreateAdminKeyBody) =>
    request<CreatedKey>('POST', '/api/keys', input),
  revokeAnyKey: (keyId: string) => request<ApiKey>('POST', `/api/keys/${encodeURIComponent(keyId)}/revoke`),

  triggers: (projectId: string) => request<TriggerSettings>('GET', `/api/projects/${encodeURIComponent(projectId)}/triggers`),
  saveTriggers: (projectId: string, input: TriggerSettingsBody) =>
    request<TriggerSettings>('PUT', `/api/projects/${encodeURIComponent(projectId)}/triggers`, input),
  makeTriggerSecret: (projectId: string) =>
    request<TriggerSettingsWithSecret>('POST', `/api/projects/${encodeURIComponent(projectId)}/triggers/secret`),
  triggerDeliveries: (projectId: string) =>
    request<TriggerDeliveryList>('GET', `/api/projects/${encodeURIComponent(projectId)}/triggers/deliveries?limit=50`).then((r) => r.deliveries),

  // Job API routes the typed client does not cover.
  jobMessages: (projectId: string, jobId: string) =>
    request<JobMessageList>('GET', `/v2/agent/${encodeURIComponent(projectId)}/job/${encodeURIComponent(jobId)}/messages`).then((r) => r.messages),
  timeseries: (projectId: string, q: Required<TimeseriesQuery>) =>
    request<TimeseriesResponse>('GET', `/v1/analytics/${encodeURIComponent(projectId)}/timeseries?${new URLSearchParams(q)}`).then((r) => r.series),
  agents: (projectId: string, q: Range) =>
    request<AgentsResponse>('GET', `/v1/analytics/${encodeURIComponent(projectId)}/agents?${new URLSearchParams(q)}`).then((r) => r.agents),
};

const sessionFetch: typeof fetch = (input, init = {}) => {
  const headers = new Headers(init.headers);
  headers.delete('authorization');
  const method = (init.method ?? 'GET').toUpperCase();
  if (method !== 'GET' && method !== 'HEAD' && csrfToken) headers.set('x-csrf-token', csrfToken);
  return fetch(input, { ...init, headers, credentials: 'same-origin' }).then((res) => {
    // The job and analytics API answer 401 without a session; find out whether it ended.
    if (res.status === 401) void api.session().catch(() => onSignedOut());
    return res;
  });
};

/** The typed client for one project, signed in by the dashboard session. */
export function folioClient(projectId: string): FolioClient {
  return new FolioClient({
    baseUrl: window.location.origin,
    // Never sent: sessionFetch removes the Authorization header; the session cookie authenticates.
    apiKey: 'dashboard-session',
    projectId,
    fetch: sessionFetch,
    retries: 2,
  });
}
