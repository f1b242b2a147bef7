// Logs are structured JSON with request ids, and never contain the Authorization header or a key.
import { describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { runCli, startProcess } from '../helpers/process.ts';
import { tempDir } from '../helpers/server.ts';

describe('logging', () => {
  it('logs requests with ids and never the key', async () => {
    const dir = tempDir();
    const p = JSON.parse((await runCli(['project', 'create', '--name', 'L', '--repository', 'https://github.com/a/b', '--json'], { FOLIO_DATA_DIR: dir })).stdout);
    const k = JSON.parse((await runCli(['key', 'create', '--project', p.id, '--json'], { FOLIO_DATA_DIR: dir })).stdout).key;
    const child = await startProcess('bin/folio.mjs', ['serve', '--no-workers'], { FOLIO_DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'info', ANTHROPIC_API_KEY: 'x' });
    try {
      const res = await fetch(`${child.url}/v2/agent/${p.id}/jobs`, { headers: { authorization: `Bearer ${k}`, 'x-request-id': 'req-abc-123' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-request-id')).toBe('req-abc-123');
      await fetch(`${child.url}/v2/agent/${p.id}/jobs`, { headers: { authorization: 'Bearer folio_wrongwrongwrongwrongwrongwrongwrong' } });
      await new Promise((r) => setTimeout(r, 300));
      const lines = child.output().trim().split('\n').filter((l) => l.startsWith('{'));
      const entries = lines.map((l) => JSON.parse(l));
      expect(entries.some((e) => e.reqId === 'req-abc-123')).toBe(true);
      expect(child.output()).not.toContain(k);
      expect(child.output()).not.toContain('folio_wrongwrong');
      expect(child.output().toLowerCase()).not.toContain('bearer');
    } finally {
      child.proc.kill('SIGTERM');
      await child.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('serving jobs, from the store and from the cache, logs nothing at warn level', async () => {
    const dir = tempDir();
    const p = JSON.parse((await runCli(['project', 'create', '--name', 'L', '--repository', 'https://github.com/a/b', '--json'], { FOLIO_DATA_DIR: dir })).stdout);
    const k = JSON.parse((await runCli(['key', 'create', '--project', p.id, '--json'], { FOLIO_DATA_DIR: dir })).stdout).key;
    const env = { FOLIO_DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'info', FOLIO_ACCESS_LOG: 'false', ANTHROPIC_API_KEY: 'x' };
    const child = await startProcess('bin/folio.mjs', ['serve', '--no-workers'], env);
    try {
      const headers = { authorization: `Bearer ${k}`, 'content-type': 'application/json' };
      const job = await (await fetch(`${child.url}/v2/agent/${p.id}/job`, { method: 'POST', headers, body: JSON.stringify({ prompt: 'x' }) })).json();
      const bodies = [];
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${child.url}/v2/agent/${p.id}/job/${job.id}`, { headers });
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
        bodies.push(await res.json());
      }
      expect(bodies[1]).toEqual(bodies[0]);
      expect(bodies[2]).toEqual(job);
      await new Promise((r) => setTimeout(r, 200));
      const entries = child.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
      expect(entries.filter((e) => e.level >= 40)).toEqual([]);
    } finally {
      child.proc.kill('SIGTERM');
      await child.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
