// Shared setup of the trigger tests: a project's webhook secret and watched repositories, and reads
// of what a delivery did.
import { expect } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import { githubPullRequest, sendGitHub, type SentDelivery } from '../fixtures/code-host-sender.ts';
import type { CodeHostServer } from '../fixtures/git-server.ts';
import { waitForJob } from '../agent/e2e-helpers.ts';
import { updateTriggerSettings, type RepositorySettingsInput, type TriggerSettingsInput } from '../../src/jobs/triggers/settings.ts';

/** Makes the project's secret and stores the settings; returns the secret. */
export async function configureTriggers(server: TestServer, projectId: string, settings: TriggerSettingsInput): Promise<string> {
  const { store } = server.services.triggers;
  const secret = await store.rotateSecret(projectId);
  await updateTriggerSettings(store, projectId, settings);
  return secret;
}

export const endpoint = (server: TestServer, projectId: string, host: 'github' | 'gitlab') => `${server.url}/v1/triggers/${projectId}/${host}`;

export async function deliveries(server: TestServer, projectId: string) {
  return server.services.triggers.store.recentDeliveries(projectId, 200);
}

export async function jobsOf(server: TestServer, projectId: string, key: string): Promise<any[]> {
  const res = await server.api('GET', `/v2/agent/${projectId}/jobs?limit=100`, { key });
  return res.body.jobs;
}

export async function messagesOf(server: TestServer, projectId: string, jobId: string, key: string): Promise<any[]> {
  const res = await server.api('GET', `/v2/agent/${projectId}/job/${jobId}/messages`, { key });
  return res.body.messages;
}

export interface WatchingProject {
  projectId: string;
  key: string;
  secret: string;
  /** The project's webhook endpoint for the host. */
  url: string;
}

/** `count` projects on the same docs repository, each with its own secret, all watching `repository`. */
export async function projectsWatching(
  server: TestServer,
  count: number,
  docs: { repositoryUrl: string; codeHost: 'github' | 'gitlab' },
  repository: RepositorySettingsInput,
): Promise<WatchingProject[]> {
  const projects: WatchingProject[] = [];
  for (let i = 0; i < count; i++) {
    const projectId = await server.createProject({ name: `Watcher ${i + 1}`, ...docs });
    const key = await server.createKey(projectId);
    const secret = await configureTriggers(server, projectId, { repositories: [repository] });
    projects.push({ projectId, key, secret, url: endpoint(server, projectId, repository.host) });
  }
  return projects;
}

/**
 * Exactly once per project: the same delivery (same delivery id) sent to each project's webhook
 * starts one job in each, and a redelivery to any of them is a duplicate of that project's own job.
 * Returns the jobs, finished.
 */
export async function expectOneJobPerProject(server: TestServer, projects: WatchingProject[], send: (p: WatchingProject) => Promise<SentDelivery>): Promise<any[]> {
  const jobIds: string[] = [];
  for (const p of projects) {
    const sent = await send(p);
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    expect(sent.body.outcome).toBe('started');
    jobIds.push(sent.body.jobId);
  }
  expect(new Set(jobIds).size).toBe(projects.length);
  // Redelivered in the other order: each copy finds its own project's job, not the first one made.
  for (const [i, p] of [...projects.entries()].reverse()) {
    const again = await send(p);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toMatchObject({ outcome: 'duplicate', jobId: jobIds[i] });
  }
  const jobs = [];
  for (const [i, p] of projects.entries()) {
    expect((await jobsOf(server, p.projectId, p.key)).map((j) => j.id)).toEqual([jobIds[i]]);
    expect((await deliveries(server, p.projectId)).map((d) => [d.outcome, d.jobId])).toEqual([
      ['duplicate', jobIds[i]],
      ['started', jobIds[i]],
    ]);
    jobs.push(await waitForJob(server, p.projectId, jobIds[i], p.key));
  }
  return jobs;
}

/**
 * A job started the way a code change starts one: `repo` is created on the fake code host, watched by
 * the project (merged pull requests), a pull request on it is merged and GitHub's signed delivery is
 * sent. Returns the job's id and the change's web address.
 */
export async function jobFromMergedPullRequest(
  server: TestServer,
  host: CodeHostServer,
  o: { projectId: string; repo: string; token?: string },
): Promise<{ jobId: string; repositoryUrl: string; changeUrl: string }> {
  const [owner, name] = o.repo.split('/');
  host.createRepo(o.repo, { 'src/cli.ts': 'export const flags = ["--verbose"];\n' });
  const base = host.revParse(o.repo, 'main');
  const head = host.commit(o.repo, 'feature/quiet', { 'src/cli.ts': 'export const flags = ["--verbose", "--quiet"];\n' }, 'Add --quiet');
  const number = 1 + host.github.pulls.filter((p) => p.owner === owner && p.repo === name).length;
  host.github.pulls.push({ number, owner, repo: name, head: 'feature/quiet', base: 'main', title: 'Add --quiet', body: '', draft: false, state: 'closed' });
  const repositoryUrl = `${host.origin}/${o.repo}`;
  const secret = await configureTriggers(server, o.projectId, { repositories: [{ host: 'github', repositoryUrl, events: ['merged'], token: o.token }] });
  const payload = githubPullRequest('closed', { repo: o.repo, number, title: 'Add --quiet', base: { ref: 'main', sha: base }, head: { ref: 'feature/quiet', sha: head } }, { merged: true });
  const sent = await sendGitHub(endpoint(server, o.projectId, 'github'), secret, 'pull_request', payload);
  expect(sent.status, JSON.stringify(sent.body)).toBe(201);
  return { jobId: sent.body.jobId, repositoryUrl, changeUrl: `${repositoryUrl}/pull/${number}` };
}
