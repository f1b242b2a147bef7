// A server whose standard output nobody reads any more (a pipe whose reader hung, a terminal gone)
// keeps answering and stops on SIGTERM: its log waits LOG_BLOCKED_MS for the reader at most, then
// drops lines, instead of retrying the flush on exit forever on the main thread (which pino's
// default destination does, on a full pipe and on a terminal that has gone alike: the process then
// never exits).
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, startProcess } from '../helpers/process.ts';
import { tempDir } from '../helpers/server.ts';
import { LOG_BLOCKED_MS } from '../../src/util/log-destination.ts';

const dir = tempDir('folio-blocked-stdout-');
const ttyDir = tempDir('folio-gone-tty-');
afterAll(() => {
  for (const d of [dir, ttyDir]) rmSync(d, { recursive: true, force: true });
});

/** The processes whose environment names `dataDir` (the server, and the `timeout` before it). */
function processesOf(dataDir: string): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/environ`, 'utf8').split('\0').includes(`FOLIO_DATA_DIR=${dataDir}`);
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

describe('folio serve with a standard output nobody reads', () => {
  it('answers every request and exits on SIGTERM once the pipe is full', async () => {
    const child = await startProcess('bin/folio.mjs', ['serve', '--no-workers'], {
      FOLIO_DATA_DIR: dir,
      PORT: '0',
      LOG_LEVEL: 'info',
      FOLIO_ACCESS_LOG: 'true', // two log lines per request
      ANTHROPIC_API_KEY: 'x',
    });
    try {
      // Stop reading: the pipe (64 KiB) and Node's buffer fill after a few hundred requests.
      child.proc.stdout!.removeAllListeners('data');
      child.proc.stdout!.pause();
      for (let i = 0; i < 3000; i++) {
        const res = await fetch(`${child.url}/healthz?n=${i}&pad=${'x'.repeat(200)}`, { signal: AbortSignal.timeout(10_000) });
        expect(res.status).toBe(200);
      }
      // The flush on exit gives up after LOG_BLOCKED_MS of blocked writes.
      child.proc.kill('SIGTERM');
      const code = await Promise.race([child.exited, new Promise((r) => setTimeout(() => r('still running'), LOG_BLOCKED_MS + 15_000))]);
      expect(code).toBe(0);
    } finally {
      child.proc.kill('SIGKILL');
    }
  }, 90_000);
});

describe('folio serve whose terminal has gone', () => {
  it('exits on SIGTERM', async () => {
    // util-linux `script` runs serve on a pseudo-terminal, `timeout` in its own process group (as in
    // serve.test.ts); `script` is stopped once serve is listening, so the terminal is gone (writes
    // fail with EIO), then timeout's SIGTERM reaches serve.
    const cmd = `env FOLIO_DATA_DIR=${ttyDir} PORT=0 ANTHROPIC_API_KEY=x timeout 12 ${process.execPath} bin/folio.mjs serve --no-workers`;
    const child = spawn('script', ['-qec', cmd, '/dev/null'], { cwd: ROOT, detached: true, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', TERM: 'xterm' }, stdio: ['ignore', 'pipe', 'pipe'] });
    await new Promise<void>((resolve, reject) => {
      let text = '';
      child.stdout.on('data', (d: Buffer) => {
        text += d.toString();
        if (/Folio is listening/.test(text)) resolve();
      });
      child.on('error', reject);
      child.on('close', () => reject(new Error(`script ended before serve listened: ${text}`)));
    });
    process.kill(-child.pid!, 'SIGTERM');
    expect(processesOf(ttyDir).length).toBeGreaterThan(0);
    // timeout sends SIGTERM 12 s after the start; the shutdown then takes a few seconds at most.
    for (let i = 0; i < 300 && processesOf(ttyDir).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    const left = processesOf(ttyDir);
    for (const pid of left) process.kill(pid, 'SIGKILL');
    expect(left).toEqual([]);
  }, 60_000);
});
