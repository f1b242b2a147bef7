// FOLIO_AGENTS_FILE: the operator's agents and referring hosts are one server's rules, on every way in
// (the events API and a raw log read by the import's worker thread) and in the reports that map agents
// and hosts; another server in the same process, without the file, keeps Folio's own lists.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.ts';
import { clf } from './helpers.ts';

const ACME_UA = 'Mozilla/5.0 (compatible; AcmeAssistant/2.1)';
const HUMAN_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const AT = Date.now() - 120_000;

describe('FOLIO_AGENTS_FILE', () => {
  let withFile: TestServer;
  let plain: TestServer;

  beforeAll(async () => {
    const file = path.join(tempDir(), 'agents.json');
    writeFileSync(
      file,
      JSON.stringify({
        agents: [{ name: 'AcmeAssistant', company: 'Acme', category: 'ai_answer', pattern: 'AcmeAssistant/\\d', example: ACME_UA }],
        // A new assistant's host, and a known host reclassified (the operator's rules are checked first).
        referrers: [
          { host: 'chat.acme.example', category: 'ai_assistant', company: 'Acme' },
          { host: 'www.google.com', category: 'social' },
        ],
      }),
    );
    withFile = await startTestServer({ workers: 0, env: { FOLIO_RATE_LIMIT_ANALYTICS: '0', FOLIO_AGENTS_FILE: file } });
    plain = await startTestServer({ workers: 0, env: { FOLIO_RATE_LIMIT_ANALYTICS: '0' } });
  });
  afterAll(async () => {
    await withFile?.close();
    await plain?.close();
  });

  /** The same traffic into a server: two views by the operator's agent (one from a log), two referred humans. */
  async function send(server: TestServer): Promise<{ projectId: string; key: string }> {
    const projectId = await server.createProject();
    const key = await server.createKey(projectId, 'write');
    const at = new Date(AT).toISOString();
    const events = [
      { visitorId: 'a1', userAgent: ACME_UA },
      { visitorId: 'h1', userAgent: HUMAN_UA, referrer: 'https://chat.acme.example/c/1' },
      { visitorId: 'h2', userAgent: HUMAN_UA, referrer: 'https://www.google.com/search?q=x' },
    ].map((e) => ({ timestamp: at, path: '/docs/a', ...e }));
    expect((await server.api('POST', `/v1/analytics/${projectId}/events`, { key, body: { events } })).body.rejected).toEqual([]);
    const log = `203.0.113.9 - - [${clf(AT)}] "GET /docs/b HTTP/1.1" 200 512 "-" "${ACME_UA}"\n`;
    const raw = await server.api('POST', `/v1/analytics/${projectId}/import`, { key, body: log, headers: { 'content-type': 'text/plain' } });
    expect(raw.body).toMatchObject({ recorded: 1, rejected: 0 });
    return { projectId, key };
  }

  it('classifies by the operator’s lists on every way in, and the reports map its agents and hosts', async () => {
    const { projectId, key } = await send(withFile);
    const agents = (await withFile.api('GET', `/v1/analytics/${projectId}/agents`, { key })).body.agents;
    expect(agents).toEqual([{ agent: 'AcmeAssistant', category: 'ai', visitors: 2, views: 2 }]);
    const referrers = (await withFile.api('GET', `/v1/analytics/${projectId}/referrers?limit=50`, { key })).body.referrers;
    expect(referrers).toEqual([
      { host: 'chat.acme.example', source: 'ai_assistant', human: 1, ai: 0, total: 1 },
      { host: 'www.google.com', source: 'social', human: 1, ai: 0, total: 1 },
    ]);
    const acme = await withFile.api('GET', `/v1/analytics/${projectId}/ai-companies?company=Acme`, { key });
    expect(acme.status).toBe(200);
    expect(acme.body.companies).toEqual([
      expect.objectContaining({ company: 'Acme', path: '/docs/a', assistantViews: 1, referredHumans: 1 }),
      expect.objectContaining({ company: 'Acme', path: '/docs/b', assistantViews: 1, referredHumans: 0 }),
    ]);
  });

  it('stays the one server’s: a server without the file keeps Folio’s own lists', async () => {
    const { projectId, key } = await send(plain);
    // isbot's verdict on the same user agent: an unnamed bot.
    const agents = (await plain.api('GET', `/v1/analytics/${projectId}/agents`, { key })).body.agents;
    expect(agents.map((a: { agent: string; views: number }) => [a.agent, a.views])).toEqual([['Other bots', 2]]);
    const referrers = (await plain.api('GET', `/v1/analytics/${projectId}/referrers?limit=50`, { key })).body.referrers;
    expect(referrers).toEqual([
      { host: 'chat.acme.example', source: 'other', human: 1, ai: 0, total: 1 },
      { host: 'www.google.com', source: 'search', human: 1, ai: 0, total: 1 },
    ]);
    const acme = await plain.api('GET', `/v1/analytics/${projectId}/ai-companies?company=Acme`, { key });
    expect(acme.status).toBe(400);
    expect(acme.body.code).toBe('unknown_company');
  });
});
