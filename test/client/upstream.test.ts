// The client and CLI against a server that speaks only the upstream service's published protocol
// (its contract: test/fixtures/upstream-contract.json): no `code` in error bodies, no Folio extras on jobs, no events
// operation. Every response of this local server is checked against the upstream documents.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FolioClient, FolioError, type VisitorsPage } from '../../src/client/index.ts';
import { runCli } from './fixtures/run-cli.ts';
import { upstreamValidator } from '../helpers/upstream.ts';

const KEY = 'mint_upstream_test_key';
const PROJECT = 'proj-upstream';
const PR = 'https://github.com/org/repo/pull/123';

const checkJob = upstreamValidator('AgentJob', { allFields: true });
const checkError = upstreamValidator('Error');
const checkVisitors = upstreamValidator('VisitorsByPageResponse');

interface UpstreamJob {
  id: string;
  status: 'active' | 'completed' | 'archived' | 'failed';
  source: { repository: string; ref: string | null };
  model: string;
  prLink: string | null;
  createdAt: string;
  archivedAt: string | null;
}

let server: http.Server;
let baseUrl: string;
const jobs = new Map<string, { job: UpstreamJob; polls: number }>();
const requests: string[] = [];
let rateLimitNextCreate = 0;

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const problems = status < 400 ? null : checkError(body);
  if (problems) throw new Error(`the fake upstream sent an undocumented error body: ${JSON.stringify(body)}`);
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

const PATHS = Array.from({ length: 7 }, (_, i) => ({ path: `/page-${i}`, human: 10 - i, ai: i % 2, total: 10 - i + (i % 2) }));

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      requests.push(`${req.method} ${url.pathname}`);
      if (req.headers.authorization !== `Bearer ${KEY}`) return send(res, 401, { error: 'Invalid API key.' });
      let m: RegExpExecArray | null;
      if (req.method === 'POST' && url.pathname === `/v2/agent/${PROJECT}/job`) {
        if (rateLimitNextCreate > 0) {
          rateLimitNextCreate--;
          return send(res, 429, { error: 'Too many requests.' }, { 'retry-after': '1' });
        }
        const body = JSON.parse(raw || '{}') as { prompt?: string };
        if (!body.prompt) return send(res, 400, { error: 'prompt is required' });
        const id = `job-${jobs.size + 1}`;
        const job: UpstreamJob = {
          id,
          status: 'active',
          source: { repository: 'https://github.com/org/repo', ref: null },
          model: 'claude-sonnet-4-5',
          prLink: null,
          createdAt: new Date().toISOString(),
          archivedAt: null,
        };
        jobs.set(id, { job, polls: 0 });
        expect(checkJob(job)).toBeNull();
        return send(res, 201, job);
      }
      if (req.method === 'GET' && (m = new RegExp(`^/v2/agent/${PROJECT}/job/([^/]+)$`).exec(url.pathname))) {
        const entry = jobs.get(m[1]);
        if (!entry) return send(res, 404, { error: 'Job not found' });
        // Finishes on the second poll, with its pull request.
        if (++entry.polls >= 2 && entry.job.status === 'active') Object.assign(entry.job, { status: 'completed', prLink: PR, source: { ...entry.job.source, ref: 'docs/update' } });
        expect(checkJob(entry.job)).toBeNull();
        return send(res, 200, entry.job);
      }
      if (req.method === 'GET' && url.pathname === `/v1/analytics/${PROJECT}/visitors`) {
        const limit = Number(url.searchParams.get('limit') ?? 50);
        const offset = Number(url.searchParams.get('offset') ?? 0);
        const page = { totals: { human: 40, ai: 3, total: 43 }, visitors: PATHS.slice(offset, offset + limit), hasMore: offset + limit < PATHS.length };
        expect(checkVisitors(page)).toBeNull();
        return send(res, 200, page);
      }
      return send(res, 404, { error: 'Not found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('against the upstream protocol', () => {
  it('creates a job (retrying a 429 with Retry-After) and waits for its pull request', async () => {
    const statuses: number[] = [];
    const client = new FolioClient({ baseUrl, apiKey: KEY, projectId: PROJECT, onResponse: (r) => statuses.push(r.status) });
    rateLimitNextCreate = 1;
    const job = await client.createJob('Document the SSO setup');
    expect(statuses).toEqual([429, 201]);
    const done = await client.waitForJob(job.id, { intervalMs: 50 });
    expect(done).toMatchObject({ status: 'completed', prLink: PR, source: { ref: 'docs/update' } });
  });

  it('derives error codes from the status when the body has none', async () => {
    const client = new FolioClient({ baseUrl, apiKey: KEY, projectId: PROJECT });
    const err = (await client.getJob('job-404').catch((e: unknown) => e)) as FolioError;
    expect(err).toBeInstanceOf(FolioError);
    expect(err).toMatchObject({ status: 404, code: 'not_found', message: 'Job not found' });
    const bad = new FolioClient({ baseUrl, apiKey: 'wrong', projectId: PROJECT });
    await expect(bad.getJob('job-1')).rejects.toMatchObject({ status: 401, code: 'unauthorized', message: 'Invalid API key.' });
    await expect(client.createJob('')).rejects.toMatchObject({ status: 400, code: 'invalid_request', message: 'prompt is required' });
  });

  it('pages through visitors', async () => {
    const client = new FolioClient({ baseUrl, apiKey: KEY, projectId: PROJECT });
    const pages: VisitorsPage[] = [];
    for await (const page of client.allVisitors({ limit: 3 })) pages.push(page);
    expect(pages.map((p) => p.visitors.length)).toEqual([3, 3, 1]);
    expect(pages.flatMap((p) => p.visitors)).toEqual(PATHS);
  });

  it('runs `folio jobs create --wait` without live events, and prints the job without Folio extras', async () => {
    const env = { FOLIO_URL: baseUrl, FOLIO_API_KEY: KEY, FOLIO_PROJECT: PROJECT };
    const run = await runCli(['jobs', 'create', 'Document the SSO setup', '--wait'], env);
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe(`Completed: ${PR}`);
    expect(run.stderr).toContain('Created job-2 (claude-sonnet-4-5).');
    expect(run.stderr).toContain('(live events unavailable: Not found)');

    const get = await runCli(['jobs', 'get', 'job-1'], env);
    expect(get.code).toBe(0);
    expect(get.stdout).toMatch(/^STATUS\s+completed$/m);
    expect(get.stdout).toMatch(/^BRANCH\s+docs\/update$/m);
    expect(get.stdout).not.toContain('undefined');
  });
});
