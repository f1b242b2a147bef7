// `folio healthcheck`, the image's HEALTHCHECK, for each role a container runs: a server is healthy
// while its /healthz answers, a worker while it beats; a data directory where nothing started, a
// process that stopped, or a worker whose beat is stale, is not.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, runCli, startProcess } from '../helpers/process.ts';
import { tempDir } from '../helpers/server.ts';
import { eventually } from '../helpers/handlers.ts';
import { loadConfig } from '../../src/config.ts';
import { checkHealth, STALE_MS } from '../../src/cli/health.ts';

const dirs: string[] = [];
const dataDir = () => {
  const dir = tempDir('folio-health-');
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('folio healthcheck', () => {
  it('fails on a data directory where no server or worker has started', async () => {
    const dir = dataDir();
    const res = await runCli(['healthcheck'], { FOLIO_DATA_DIR: dir });
    expect(res).toEqual({ code: 1, stdout: '', stderr: `folio: No Folio server or worker has started on ${dir} yet.\n` });
  });

  it('passes while folio serve answers /healthz, and fails once it has stopped', async () => {
    const dir = dataDir();
    const server = await startProcess('bin/folio.mjs', ['serve', '--no-workers'], { FOLIO_DATA_DIR: dir, PORT: '0' });
    const pid = server.proc.pid!;
    try {
      const res = await runCli(['healthcheck'], { FOLIO_DATA_DIR: dir });
      expect(res).toEqual({ code: 0, stdout: `healthy: folio serve (pid ${pid}) answers ${server.url}/healthz\n`, stderr: '' });
    } finally {
      server.proc.kill('SIGTERM');
      await server.exited;
    }
    const after = await runCli(['healthcheck'], { FOLIO_DATA_DIR: dir });
    expect(after).toEqual({ code: 1, stdout: '', stderr: `folio: The Folio serve process (pid ${pid}) is not running.\n` });
  });

  it('passes while folio worker beats; a beat older than the limit fails', async () => {
    const dir = dataDir();
    const worker = spawn(process.execPath, [path.join(ROOT, 'bin/folio.mjs'), 'worker'], { env: { ...process.env, FOLIO_DATA_DIR: dir }, cwd: ROOT, stdio: 'ignore' });
    const exited = new Promise((r) => worker.on('exit', r));
    try {
      const res = await eventually(async () => {
        const r = await runCli(['healthcheck'], { FOLIO_DATA_DIR: dir });
        return r.code === 0 ? r : null;
      }, 30_000, 200);
      expect(res.stdout).toMatch(new RegExp(`^healthy: folio worker \\(pid ${worker.pid}\\), last beat \\d+ s ago\\n$`));
      // The same record read later than the limit allows: a worker that stopped beating.
      const config = loadConfig({ FOLIO_DATA_DIR: dir });
      await expect(checkHealth(config, Date.now() + STALE_MS + 5_000)).rejects.toThrow(/^The Folio worker's last beat was \d+ s ago \(its store did not answer, or it is stuck\)\.$/);
    } finally {
      worker.kill('SIGTERM');
      await exited;
    }
  });
});
