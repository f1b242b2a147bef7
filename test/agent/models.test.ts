import http from 'node:http';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createModel, modelConfigError, ModelConfigError } from '../../src/agent/models.ts';
import { sequence, startFakeOpenAI, toolCall, type FakeOpenAI } from '../fixtures/fake-openai.ts';
import { tempDir } from '../helpers/server.ts';

const dataDir = tempDir('folio-models-');
const env = (extra: Record<string, string>) => loadConfig({ FOLIO_DATA_DIR: dataDir, FOLIO_SECRET: 'models-test-secret-0123', ...extra }).models;

describe('model configuration', () => {
  it('names the missing setting', () => {
    const m = env({});
    expect(modelConfigError(m, 'anthropic/claude-sonnet-4-5')).toMatch(/ANTHROPIC_API_KEY/);
    expect(modelConfigError(m, 'openai/gpt-5')).toMatch(/OPENAI_API_KEY/);
    expect(modelConfigError(m, 'openai-compatible/qwen3-coder')).toMatch(/OPENAI_COMPATIBLE_BASE_URL/);
    expect(modelConfigError(m, 'mistral/large')).toMatch(/unknown provider/);
    expect(() => createModel(m, 'openai/gpt-5')).toThrow(ModelConfigError);
  });
  it('creates models for each provider', () => {
    const m = env({ ANTHROPIC_API_KEY: 'a', OPENAI_API_KEY: 'o', OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:1/v1' });
    expect(modelConfigError(m, 'openai-compatible/qwen3-coder')).toBeNull();
    const models = ['anthropic/claude-sonnet-4-5', 'openai/gpt-5', 'openai-compatible/qwen3:8b'].map((id) => createModel(m, id));
    expect(models.map((x) => (x as { modelId: string }).modelId)).toEqual(['claude-sonnet-4-5', 'gpt-5', 'qwen3:8b']);
  });
});

describe('base URLs reach the configured servers', () => {
  let seen: { url: string; auth: string | undefined; apiKey: string | undefined }[] = [];
  let server: http.Server;
  let base = '';
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      seen.push({ url: req.url ?? '', auth: req.headers.authorization, apiKey: req.headers['x-api-key'] as string | undefined });
      req.resume();
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'stop here', type: 'invalid_request_error' } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  it('anthropic and openai use their base URL and key', async () => {
    seen = [];
    const m = env({ ANTHROPIC_API_KEY: 'ak-1', ANTHROPIC_BASE_URL: `${base}/anthropic/v1`, OPENAI_API_KEY: 'ok-1', OPENAI_BASE_URL: `${base}/openai/v1` });
    await expect(generateText({ model: createModel(m, 'anthropic/claude-x'), prompt: 'hi', maxRetries: 0 })).rejects.toThrow();
    await expect(generateText({ model: createModel(m, 'openai/gpt-x'), prompt: 'hi', maxRetries: 0 })).rejects.toThrow();
    expect(seen[0]).toMatchObject({ url: '/anthropic/v1/messages', apiKey: 'ak-1' });
    expect(seen[1].url.startsWith('/openai/v1/')).toBe(true);
    expect(seen[1].auth).toBe('Bearer ok-1');
  });
});

describe('openai-compatible against the fake Chat Completions server', () => {
  let llm: FakeOpenAI;
  beforeAll(async () => {
    llm = await startFakeOpenAI();
  });
  afterAll(() => llm.close());

  const tools = {
    write_file: tool({ inputSchema: z.object({ path: z.string(), content: z.string() }), execute: async (i) => `wrote ${i.path}` }),
  };

  it('non-streaming tool calls and usage', async () => {
    llm.setResponder(sequence([toolCall('write_file', { path: 'a.md', content: 'x' }), { text: 'done', usage: { prompt: 7, completion: 3 } }]));
    const m = env({ OPENAI_COMPATIBLE_BASE_URL: llm.baseUrl });
    const r = await generateText({ model: createModel(m, 'openai-compatible/test'), prompt: 'go', tools, stopWhen: stepCountIs(3) });
    expect(r.steps[0].toolCalls[0]).toMatchObject({ toolName: 'write_file', input: { path: 'a.md', content: 'x' } });
    expect(r.text).toBe('done');
    expect(r.steps[1].usage.inputTokens).toBe(7);
    expect(llm.requests[0].stream).toBeFalsy();
    expect(llm.requests[0].model).toBe('test');
  });

  it('streaming tool calls', async () => {
    llm.setResponder(sequence([toolCall('write_file', { path: 'long/path/file.mdx', content: 'y'.repeat(50) }), { text: 'streamed answer' }]));
    const m = env({ OPENAI_COMPATIBLE_BASE_URL: llm.baseUrl });
    const n = llm.requests.length;
    const r = streamText({ model: createModel(m, 'openai-compatible/test'), prompt: 'go', tools, stopWhen: stepCountIs(3) });
    expect(await r.text).toBe('streamed answer');
    const steps = await r.steps;
    expect(steps[0].toolCalls[0]).toMatchObject({ toolName: 'write_file', input: { path: 'long/path/file.mdx', content: 'y'.repeat(50) } });
    expect(steps[0].toolResults[0].output).toBe('wrote long/path/file.mdx');
    expect(llm.requests[n].stream).toBe(true);
  });
});
