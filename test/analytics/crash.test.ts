// SIGKILL the server during sustained ingest, restart it: every event that got a 202 is counted, and
// every batch is all or nothing.
import { rmSync } from 'node:fs';
import { expect, it } from 'vitest';
import { tempDir } from '../helpers/server.ts';
import { runCli, startProcess } from '../helpers/process.ts';
import { backendDatabases } from '../helpers/backend.ts';

const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const BATCH = 200;

it('keeps every acknowledged event across a SIGKILL', async () => {
  const dataDir = tempDir('folio-crash-');
  // The CLI and both servers share this leg's backend (SQLite + DuckDB files, or PostgreSQL + ClickHouse).
  const databases = await backendDatabases();
  const env = { ...databases.env, FOLIO_DATA_DIR: dataDir, FOLIO_SECRET: 'test-secret-0123456789abcdef', LOG_LEVEL: 'info', PORT: '0', HOST: '127.0.0.1', FOLIO_RATE_LIMIT_ANALYTICS: '0' };
  const project = await runCli(['project', 'create', '--name', 'Docs', '--repository', 'https://github.com/acme/docs', '--json'], env);
  expect(project.code, project.stderr).toBe(0);
  const projectId = JSON.parse(project.stdout).id as string;
  const key = JSON.parse((await runCli(['key', 'create', '--project', projectId, '--json'], env)).stdout).key as string;

  const first = await startProcess('bin/folio.mjs', ['serve', '--no-workers'], env);
  const acked = new Set<string>();
  let sent = 0;
  let stop = false;
  const client = async (c: number) => {
    for (let b = 0; !stop; b++) {
      const path = `/crash/${c}-${b}`;
      const events = Array.from({ length: BATCH }, (_, i) => ({ path, userAgent: UA, visitorId: `${c}-${b}-${i}` }));
      sent++;
      try {
        const res = await fetch(`${first.url}/v1/analytics/${projectId}/events`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ events }),
        });
        if (res.status === 202) {
          const body = (await res.json()) as { accepted: number };
          if (body.accepted === BATCH) acked.add(path);
        }
      } catch {
        return; // the server is gone
      }
    }
  };
  const clients = [0, 1, 2, 3].map(client);
  while (acked.size < 40) await new Promise((r) => setTimeout(r, 20));
  first.proc.kill('SIGKILL');
  stop = true;
  await Promise.all(clients);
  await first.exited;

  const second = await startProcess('bin/folio.mjs', ['serve', '--no-workers'], env);
  try {
    const seen = new Map<string, number>();
    for (let offset = 0; ; offset += 250) {
      const res = await fetch(`${second.url}/v1/analytics/${projectId}/visitors?limit=250&offset=${offset}`, { headers: { authorization: `Bearer ${key}` } });
      const body = (await res.json()) as { visitors: { path: string; total: number }[]; hasMore: boolean };
      for (const r of body.visitors) seen.set(r.path, r.total);
      if (!body.hasMore) break;
    }
    for (const path of acked) expect(seen.get(path), path).toBe(BATCH);
    for (const [path, total] of seen) expect(total, `${path} is all or nothing`).toBe(BATCH);
    expect(seen.size).toBeGreaterThanOrEqual(acked.size);
    expect(seen.size).toBeLessThanOrEqual(sent);
  } finally {
    second.proc.kill('SIGTERM');
    await second.exited;
    await databases.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
