// The API reference carries Folio's name and version (package.json's), not the framework's defaults.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { JOB_EVENT_TYPES } from '../../src/contracts/job-events.ts';
import { ROOT } from '../helpers/process.ts';

const VERSION = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')).version as string;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ workers: 0 });
});
afterAll(async () => {
  await server?.close();
});

describe('the API reference', () => {
  it('names Folio and its version in the OpenAPI document', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.json().info).toMatchObject({ title: 'Folio API', version: VERSION });
  });

  it('documents every job event type with the shape of its data (src/contracts/job-events.ts)', async () => {
    const doc = (await server.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const schemas = doc.components.schemas as Record<string, { anyOf?: { properties: { type: { enum: string[] }; data: { anyOf: { properties?: object }[] } } }[] }>;
    const event = schemas.JobEvent;
    expect(event.anyOf!.map((s) => s.properties.type.enum[0])).toEqual(JOB_EVENT_TYPES);
    const toolCall = event.anyOf!.find((s) => s.properties.type.enum[0] === 'tool_call')!;
    expect(Object.keys(toolCall.properties.data.anyOf[0].properties!)).toEqual(['step', 'toolCallId', 'tool', 'args']);
    // The events page refers to it.
    expect(JSON.stringify(doc.paths['/v2/agent/{projectId}/job/{id}/events'].get.responses['200'])).toContain('JobEvent');
  });

  it('serves /docs with Folio in the page title, its mark as favicon and logo, and no Swagger defaults', async () => {
    const page = await server.app.inject({ method: 'GET', url: '/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`<title>Folio API ${VERSION} reference</title>`);
    expect(page.body).not.toContain('Swagger UI</title>');
    expect(page.body).toMatch(/<link rel="icon" type="image\/svg\+xml" href="[^"]*theme\/folio\.svg"/);
    expect(page.body).not.toContain('favicon-32x32.png');
    const icon = await server.app.inject({ method: 'GET', url: '/docs/static/theme/folio.svg' });
    expect(icon.statusCode).toBe(200);
    expect(icon.body).toContain('<svg');
    // The top bar's logo is replaced by Folio's (a data: URL the page's CSP allows).
    const init = await server.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    expect(init.body).toContain("img.src = 'data:image/svg+xml;base64,");
    const logo = /img\.src = 'data:image\/svg\+xml;base64,([^']+)'/.exec(init.body)![1];
    expect(Buffer.from(logo, 'base64').toString()).toContain('Folio');
  });
});
