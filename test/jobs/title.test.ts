// A job's title: the prompt's first line until the agent opens a pull request, then its title; and the
// migration that gives jobs made before titles existed the same title.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobTitle, JOB_TITLE_MAX } from '../../src/contracts/job-title.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

describe('jobTitle', () => {
  it('takes the first non-empty line, trimmed, with runs of spaces made one', () => {
    expect(jobTitle('\n\n   Document   the --dry-run flag  \nand the rest')).toBe('Document the --dry-run flag');
    expect(jobTitle('One line')).toBe('One line');
    expect(jobTitle('  \n ')).toBe('');
  });

  it(`caps at ${JOB_TITLE_MAX} characters with an ellipsis, never cutting a character in two`, () => {
    const long = 'Rewrite the getting started guide so that it covers installing, configuring and deploying 🚀 twice';
    const t = jobTitle(long);
    expect([...t]).toHaveLength(JOB_TITLE_MAX);
    expect(t.endsWith('…')).toBe(true);
    expect(long.startsWith(t.slice(0, -1))).toBe(true);
    expect(jobTitle('x'.repeat(JOB_TITLE_MAX))).toBe('x'.repeat(JOB_TITLE_MAX));
  });
});

describe('stored titles', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ workers: 0 });
  });
  afterAll(() => server?.close());

  it('the job list and the job view carry the title; a pull request title replaces it', async () => {
    const projectId = await server.createProject({});
    const key = await server.createKey(projectId, 'write');
    const created = await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Fix the install page\n\nIt still says npm 8.' } });
    expect(created.body.title).toBe('Fix the install page');
    const listed = await server.api('GET', `/v2/agent/${projectId}/jobs`, { key });
    expect(listed.body.jobs[0].title).toBe('Fix the install page');

    // What a worker does when the agent opens the pull request (queue.setPrLink with its title).
    const { db } = server.services.store;
    await db.updateTable('jobs').set({ lease_owner: 'w1' }).where('id', '=', created.body.id).execute();
    await server.services.queue.setPrLink(created.body.id, 'w1', 'https://github.com/acme/docs/pull/7', 'Install page: npm 10');
    const viewed = await server.api('GET', `/v2/agent/${projectId}/job/${created.body.id}`, { key });
    expect(viewed.body).toMatchObject({ title: 'Install page: npm 10', prLink: 'https://github.com/acme/docs/pull/7' });
  });
});
