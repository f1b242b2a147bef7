// Spending limits through the API (jobs/budget.ts): the settings' round trip, a job's limits from its
// request or the project's defaults, and the monthly budgets refusing new jobs and follow-ups with one
// sentence and a stable code. Usage is recorded the way the worker records it (JobsService.recordUsage).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { ScriptedHandler, eventually } from '../helpers/handlers.ts';
import { monthOf } from '../../src/jobs/budget.ts';
import { Browser, setUp } from '../dashboard/session.ts';

let server: TestServer;
let b: Browser;
const PRICED = 'anthropic/claude-sonnet-4-5'; // $3 in, $15 out per million tokens (the default prices)
const UNPRICED = 'openai-compatible/local-model';

beforeAll(async () => {
  server = await startTestServer({
    jobHandler: new ScriptedHandler(),
    workers: 1,
    env: { FOLIO_MODEL: PRICED, FOLIO_MODELS: UNPRICED, OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:9/v1' },
  });
  b = await setUp(server);
});
afterAll(async () => {
  await server?.close();
});

const nextMonthStart = () => new Date(monthOf(Date.now()).resetsAt).toISOString().slice(0, 10);

async function settle(projectId: string, jobId: string, key: string) {
  return eventually(async () => {
    const job = (await server.api('GET', `/v2/agent/${projectId}/job/${jobId}`, { key })).body;
    return job.status !== 'active' ? job : null;
  });
}

describe('spending settings', () => {
  it('round trip through the settings API: set, read back, refuse nonsense with the field, clear', async () => {
    const created = (await b.req('POST', '/api/projects', { body: { name: 'Budgeted', repositoryUrl: 'https://github.com/acme/budget' } })).body;
    expect(created).toMatchObject({ instructions: null, defaultMaxCostUsd: null, defaultMaxTokens: null, monthlyBudgetUsd: null, monthlyTokenBudget: null });
    const settings = { instructions: 'Write in British English.\nNever use the word "simply".', defaultMaxCostUsd: 0.75, defaultMaxTokens: 200_000, monthlyBudgetUsd: 50, monthlyTokenBudget: 5_000_000 };
    const set = await b.req('PATCH', `/api/projects/${created.id}`, { body: settings });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toMatchObject(settings);
    expect((await b.req('GET', `/api/projects/${created.id}`)).body).toMatchObject(settings);

    for (const bad of [{ defaultMaxCostUsd: 0 }, { monthlyTokenBudget: 1.5 }, { defaultMaxTokens: -3 }, { instructions: 'x'.repeat(20_001) }]) {
      const res = await b.req('PATCH', `/api/projects/${created.id}`, { body: bad });
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.body.error.length).toBeGreaterThan(10);
      expect(JSON.stringify(res.body.details)).toContain(Object.keys(bad)[0]);
    }
    const cleared = await b.req('PATCH', `/api/projects/${created.id}`, { body: { instructions: '', defaultMaxCostUsd: null, monthlyBudgetUsd: null } });
    expect(cleared.body).toMatchObject({ instructions: null, defaultMaxCostUsd: null, monthlyBudgetUsd: null, defaultMaxTokens: 200_000 });
  });
});

describe('a job\'s limits', () => {
  it('from the create request, else the project\'s defaults; dollars only for a model with a price', async () => {
    const projectId = await server.createProject({ defaultMaxCostUsd: 2, defaultMaxTokens: 90_000 });
    const key = await server.createKey(projectId);
    const own = await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Own limit', maxCostUsd: 0.25 } });
    expect(own.status, own.text).toBe(201);
    expect(own.body.limit).toEqual({ maxCostUsd: 0.25, maxTokens: 90_000 });
    const byDefault = await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Default limit' } });
    expect(byDefault.body.limit).toEqual({ maxCostUsd: 2, maxTokens: 90_000 });
    expect((await server.api('GET', `/v2/agent/${projectId}/job/${byDefault.body.id}`, { key })).body.limit).toEqual({ maxCostUsd: 2, maxTokens: 90_000 });

    // Without a price the project's dollar default cannot apply; the tokens one does.
    const unpriced = await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Local model', model: UNPRICED } });
    expect(unpriced.body.limit).toEqual({ maxCostUsd: null, maxTokens: 90_000 });
    const refused = await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Local model', model: UNPRICED, maxCostUsd: 1 } });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('model_not_priced');
    expect(refused.body.error).toContain('set maxTokens instead');
    const tokens = await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Local model', model: UNPRICED, maxTokens: 5000 } });
    expect(tokens.body.limit).toEqual({ maxCostUsd: null, maxTokens: 5000 });

    for (const body of [{ prompt: 'x', maxCostUsd: 0 }, { prompt: 'x', maxTokens: 0.5 }, { prompt: 'x', maxCostUsd: 'lots' }]) {
      const res = await server.api('POST', `/v2/agent/${projectId}/job`, { key, body });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_request');
    }
  });
});

describe('monthly budgets', () => {
  it('a spent dollar budget refuses new jobs and follow-ups with the budget, the spend and the reset day', async () => {
    const projectId = await server.createProject({ monthlyBudgetUsd: 0.5 });
    const key = await server.createKey(projectId);
    const first = await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'First' } });
    expect(first.status).toBe(201);
    await settle(projectId, first.body.id, key);
    // 100,000 input + 20,000 output tokens at $3/$15 per million: $0.60.
    await server.services.jobs.recordUsage({ id: first.body.id, projectId, model: PRICED }, { inputTokens: 100_000, outputTokens: 20_000 });

    const refused = await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Second' } });
    expect(refused.status).toBe(402);
    expect(refused.body.code).toBe('monthly_budget_exceeded');
    expect(refused.body.error).toBe(`This project's monthly budget of $0.50 is spent: $0.60 so far this month; it resets on ${nextMonthStart()} (UTC).`);
    const followUp = await server.api('POST', `/v2/agent/${projectId}/job/${first.body.id}/message`, { key, body: { prompt: 'More' } });
    expect(followUp.status).toBe(402);
    expect(followUp.body).toEqual(refused.body);
    // Nothing was written: the job has its one message, and the refused create left no job.
    expect((await server.api('GET', `/v2/agent/${projectId}/jobs`, { key })).body.jobs).toHaveLength(1);

    const usage = (await server.api('GET', `/v2/agent/${projectId}/usage`, { key })).body;
    expect(usage.month).toMatchObject({ costUsd: 0.6, totalTokens: 120_000, budgetUsd: 0.5, tokenBudget: null, resetsOn: nextMonthStart() });
    expect(usage.month.from).toMatch(/^\d{4}-\d{2}-01$/);

    // A higher budget lets work start again.
    await server.services.projects.update(projectId, { monthlyBudgetUsd: 5 });
    expect((await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Third' } })).status).toBe(201);
  });

  it('a token budget counts every model, priced or not', async () => {
    const projectId = await server.createProject({ monthlyTokenBudget: 1000 });
    const key = await server.createKey(projectId);
    const job = await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Local', model: UNPRICED } });
    expect(job.status).toBe(201);
    await settle(projectId, job.body.id, key);
    await server.services.jobs.recordUsage({ id: job.body.id, projectId, model: UNPRICED }, { inputTokens: 900, outputTokens: 300 });
    const refused = await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Another' } });
    expect(refused.status).toBe(402);
    expect(refused.body.error).toBe(`This project's monthly budget of 1,000 tokens is used up: 1,200 tokens so far this month; it resets on ${nextMonthStart()} (UTC).`);
    // Another project's budget is its own.
    const other = await server.createProject();
    const otherKey = await server.createKey(other);
    expect((await server.api('POST', `/v2/agent/${other}/job`, { key: otherKey, body: { prompt: 'Fine' } })).status).toBe(201);
  });
});
