// Shared setup of the trigger tests: a project's webhook secret and watched repositories, and reads
// of what a delivery did.
import type { TestServer } from '../helpers/server.ts';
import { updateTriggerSettings, type TriggerSettingsInput } from '../../src/jobs/triggers/settings.ts';

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
