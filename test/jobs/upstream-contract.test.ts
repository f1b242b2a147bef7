// The checker of the upstream contract finds what it should: otherwise the compatibility tests that use it prove nothing.
import { describe, expect, it } from 'vitest';
import { operationProblems, upstreamValidator } from '../helpers/upstream.ts';

const job = {
  id: 'job_1',
  status: 'active',
  source: { repository: 'https://github.com/acme/docs', ref: null },
  model: 'anthropic/claude-sonnet-4-5',
  prLink: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  archivedAt: null,
};

describe('upstream contract checker', () => {
  const check = upstreamValidator('AgentJob', { allFields: true });

  it('accepts a conforming job, with extra fields', () => {
    expect(check(job)).toBeNull();
    expect(check({ ...job, updatedAt: job.createdAt, error: null, source: { ...job.source, baseRef: 'main' } })).toBeNull();
  });

  it('finds wrong types, enums, formats, nulls and missing fields', () => {
    expect(check({ ...job, status: 'running' })).toMatch(/\/status is "running", not one of/);
    expect(check({ ...job, createdAt: 'yesterday' })).toMatch(/\/createdAt is not a date-time/);
    expect(check({ ...job, prLink: 'not a url' })).toMatch(/\/prLink is not a uri/);
    expect(check({ ...job, model: null })).toMatch(/\/model is null/);
    expect(check({ ...job, source: { repository: 1, ref: null } })).toMatch(/\/source\/repository is not a string/);
    const { prLink: _, ...withoutPr } = job;
    expect(check(withoutPr)).toMatch(/\/prLink is missing/);
  });

  it('checks required fields and array items of the analytics bodies', () => {
    const visitors = upstreamValidator('VisitorsByPageResponse');
    expect(visitors({ totals: { human: 1, ai: 0, total: 1 }, visitors: [{ path: '/', human: 1, ai: 0, total: 1 }], hasMore: false })).toBeNull();
    expect(visitors({ totals: { human: 1, ai: 0 }, visitors: [], hasMore: false })).toMatch(/\/totals\/total is missing/);
    expect(visitors({ totals: { human: 1, ai: 0, total: 1 }, visitors: [{ path: '/', human: '1', ai: 0, total: 1 }], hasMore: false })).toMatch(
      /\/visitors\/0\/human is not a number/,
    );
  });

  it('refuses statuses an operation does not declare', () => {
    expect(operationProblems('GET /v2/agent/{projectId}/job/{id}', 404, { error: 'Job not found.' })).toBeNull();
    expect(operationProblems('GET /v2/agent/{projectId}/job/{id}', 418, { error: 'teapot' })).toMatch(/does not declare 418/);
  });
});
